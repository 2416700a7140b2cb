//! GitHub Actions expressions (`${{ … }}`), evaluated as the runner does: literals (`null`,
//! booleans, numbers, `'strings'` with `''` escapes), contexts and property access (`a.b`,
//! `a['b']`, `a[0]`, the `a.*` filter), `!`, `<` `<=` `>` `>=`, `==` `!=`, `&&` `||` (which
//! return an operand, not a boolean), parentheses, and the functions `success()`,
//! `failure()`, `always()`, `cancelled()`, `fromJSON`, `toJSON`, `contains`, `startsWith`,
//! `endsWith`, `format`, `join` and `hashFiles`.
//!
//! The rules are GitHub's (docs.github.com, "Evaluate expressions in workflows and actions"):
//! falsy are `false`, `0`, `-0`, `''`, `null` and `NaN`; `==` between different types compares
//! them as numbers (`null` → 0, booleans → 1/0, strings parsed, `''` → 0, others NaN); strings
//! compare ignoring case; property names are looked up ignoring case. One deviation: two
//! arrays or objects are equal when their contents are (GitHub compares instances).

use std::path::Path;

use serde_json::Value;

/// What `success()`, `failure()` and `cancelled()` answer where the expression is evaluated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Status {
    pub success: bool,
    pub failure: bool,
    pub cancelled: bool,
}

impl Status {
    /// Nothing failed, nothing was cancelled.
    pub const OK: Self = Self {
        success: true,
        failure: false,
        cancelled: false,
    };
}

/// The contexts (`github`, `env`, `matrix`, `needs`, `steps`, `inputs`, `runner`, `job`,
/// `strategy`) as one JSON object, the status functions' answers, and the directory
/// `hashFiles` globs in.
pub struct Scope<'a> {
    pub contexts: &'a serde_json::Map<String, Value>,
    pub status: Status,
    pub workspace: Option<&'a Path>,
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Lit(Value),
    Ident(String),
    Punct(&'static str),
}

#[derive(Clone, Debug)]
enum Expr {
    Lit(Value),
    Ctx(String),
    Prop(Box<Expr>, String),
    Index(Box<Expr>, Box<Expr>),
    Star(Box<Expr>),
    Not(Box<Expr>),
    Bin(&'static str, Box<Expr>, Box<Expr>),
    Call(String, Vec<Expr>),
}

const PUNCTS: [&str; 15] = [
    "==", "!=", "<=", ">=", "&&", "||", "<", ">", "!", "(", ")", "[", "]", ".", ",",
];

#[expect(
    clippy::many_single_char_names,
    reason = "a lexer's bytes, cursor and character"
)]
fn tokenize(src: &str) -> Result<Vec<Tok>, String> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c == b'\'' {
            let mut s = String::new();
            let mut j = i + 1;
            loop {
                match src[j..].find('\'') {
                    None => return Err(format!("unterminated string in `{src}`")),
                    Some(p) => {
                        s.push_str(&src[j..j + p]);
                        j += p + 1;
                        if b.get(j) == Some(&b'\'') {
                            s.push('\'');
                            j += 1;
                        } else {
                            break;
                        }
                    }
                }
            }
            out.push(Tok::Lit(Value::String(s)));
            i = j;
        } else if c.is_ascii_digit() || (c == b'-' && b.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            let end = src[i + 1..]
                .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '.' || ch == '_'))
                .map_or(b.len(), |p| i + 1 + p);
            out.push(Tok::Lit(number_lit(&src[i..end])));
            i = end;
        } else if c == b'*' {
            out.push(Tok::Punct("*"));
            i += 1;
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let end = src[i..]
                .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_' || ch == '-'))
                .map_or(b.len(), |p| i + p);
            out.push(match &src[i..end] {
                "true" => Tok::Lit(Value::Bool(true)),
                "false" => Tok::Lit(Value::Bool(false)),
                "null" => Tok::Lit(Value::Null),
                word => Tok::Ident(word.to_owned()),
            });
            i = end;
        } else if let Some(p) = PUNCTS.iter().find(|p| src[i..].starts_with(**p)) {
            out.push(Tok::Punct(p));
            i += p.len();
        } else {
            return Err(format!("unexpected `{}` in `{src}`", &src[i..=i]));
        }
    }
    Ok(out)
}

fn number_lit(s: &str) -> Value {
    let n = if let Some(hex) = s.strip_prefix("0x") {
        i64::from_str_radix(hex, 16).map_or(f64::NAN, |v| v as f64)
    } else {
        s.parse::<f64>().unwrap_or(f64::NAN)
    };
    num(n)
}

/// A JSON number from `n` (an integer when it is one); NaN and the infinities have no JSON
/// form and become `null`, which is falsy as NaN is.
fn num(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9e15 {
        Value::from(n as i64)
    } else {
        serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)
    }
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn eat(&mut self, p: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Punct(x)) if *x == p) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, p: &str) -> Result<(), String> {
        if self.eat(p) {
            Ok(())
        } else {
            Err(format!("expected `{p}`, found {:?}", self.peek()))
        }
    }

    /// One precedence level of left-associative binary operators, each level's operands
    /// parsed by the next: `||`, `&&`, `== !=`, `< <= > >=`.
    fn binary(&mut self, level: usize) -> Result<Expr, String> {
        const LEVELS: [&[&str]; 4] = [&["||"], &["&&"], &["==", "!="], &["<", "<=", ">", ">="]];
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut lhs = self.binary(level + 1)?;
        while let Some(Tok::Punct(p)) = self.peek().cloned() {
            if !LEVELS[level].contains(&p) {
                break;
            }
            self.pos += 1;
            let rhs = self.binary(level + 1)?;
            lhs = Expr::Bin(p, Box::new(lhs), Box::new(rhs));
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> Result<Expr, String> {
        if self.eat("!") {
            return Ok(Expr::Not(Box::new(self.unary()?)));
        }
        let mut e = self.primary()?;
        loop {
            if self.eat(".") {
                match self.peek().cloned() {
                    Some(Tok::Ident(name)) => {
                        self.pos += 1;
                        e = Expr::Prop(Box::new(e), name);
                    }
                    Some(Tok::Punct("*")) => {
                        self.pos += 1;
                        e = Expr::Star(Box::new(e));
                    }
                    other => return Err(format!("expected a property name, found {other:?}")),
                }
            } else if self.eat("[") {
                if self.eat("*") {
                    e = Expr::Star(Box::new(e));
                } else {
                    let idx = self.binary(0)?;
                    e = Expr::Index(Box::new(e), Box::new(idx));
                }
                self.expect("]")?;
            } else {
                return Ok(e);
            }
        }
    }

    fn primary(&mut self) -> Result<Expr, String> {
        let tok = self.peek().cloned();
        self.pos += 1;
        match tok {
            Some(Tok::Lit(v)) => Ok(Expr::Lit(v)),
            Some(Tok::Punct("(")) => {
                let e = self.binary(0)?;
                self.expect(")")?;
                Ok(e)
            }
            Some(Tok::Ident(name)) if self.eat("(") => {
                let mut args = Vec::new();
                if !self.eat(")") {
                    loop {
                        args.push(self.binary(0)?);
                        if self.eat(")") {
                            break;
                        }
                        self.expect(",")?;
                    }
                }
                Ok(Expr::Call(name.to_ascii_lowercase(), args))
            }
            Some(Tok::Ident(name)) => Ok(Expr::Ctx(name.to_ascii_lowercase())),
            other => Err(format!("unexpected {other:?}")),
        }
    }
}

fn parse(src: &str) -> Result<Expr, String> {
    let mut p = Parser {
        toks: tokenize(src)?,
        pos: 0,
    };
    let e = p.binary(0)?;
    if p.pos != p.toks.len() {
        return Err(format!("`{src}`: unexpected {:?}", p.peek()));
    }
    Ok(e)
}

/// Whether GitHub would treat `v` as true.
pub fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// A value as GitHub puts it into a string: `null` → `''`, numbers without a needless `.0`,
/// arrays and objects as pretty JSON.
pub fn to_text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        Value::Array(_) | Value::Object(_) => serde_json::to_string_pretty(v).unwrap(),
    }
}

fn to_number(v: &Value) -> f64 {
    match v {
        Value::Null => 0.0,
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Number(n) => n.as_f64().unwrap_or(f64::NAN),
        Value::String(s) if s.trim().is_empty() => 0.0,
        Value::String(s) => {
            let s = s.trim();
            s.strip_prefix("0x").map_or_else(
                || s.parse().unwrap_or(f64::NAN),
                |h| i64::from_str_radix(h, 16).map_or(f64::NAN, |v| v as f64),
            )
        }
        Value::Array(_) | Value::Object(_) => f64::NAN,
    }
}

/// GitHub's loose `==`.
pub fn loose_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::String(x), Value::String(y)) => x.to_lowercase() == y.to_lowercase(),
        (Value::Array(_), Value::Array(_)) | (Value::Object(_), Value::Object(_)) => a == b,
        (Value::Array(_) | Value::Object(_), _) | (_, Value::Array(_) | Value::Object(_)) => false,
        _ => to_number(a) == to_number(b),
    }
}

fn compare(a: &Value, b: &Value) -> Option<std::cmp::Ordering> {
    if let (Value::String(x), Value::String(y)) = (a, b) {
        return Some(x.to_lowercase().cmp(&y.to_lowercase()));
    }
    to_number(a).partial_cmp(&to_number(b))
}

/// A property of `v` by name, ignoring case; `null` when there is none.
fn prop(v: &Value, name: &str) -> Value {
    match v {
        Value::Object(map) => map
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map_or(Value::Null, |(_, v)| v.clone()),
        _ => Value::Null,
    }
}

/// A value, or the result of a `.*` filter, which the next property access maps over.
enum Val {
    One(Value),
    Many(Vec<Value>),
}

impl Val {
    fn value(self) -> Value {
        match self {
            Val::One(v) => v,
            Val::Many(v) => Value::Array(v),
        }
    }
}

fn eval_expr(e: &Expr, s: &Scope<'_>) -> Result<Val, String> {
    Ok(Val::One(match e {
        Expr::Lit(v) => v.clone(),
        Expr::Ctx(name) => match s.contexts.get(name) {
            Some(v) => v.clone(),
            None => return Err(format!("unrecognized named-value: '{name}'")),
        },
        Expr::Prop(obj, name) => match eval_expr(obj, s)? {
            Val::One(v) => prop(&v, name),
            Val::Many(vs) => {
                let picked = vs.iter().map(|v| prop(v, name)).filter(|v| !v.is_null());
                return Ok(Val::Many(picked.collect()));
            }
        },
        Expr::Index(obj, idx) => {
            let obj = eval_expr(obj, s)?.value();
            let idx = eval_expr(idx, s)?.value();
            match (&obj, &idx) {
                (Value::Array(a), _) => {
                    let i = to_number(&idx);
                    if i >= 0.0 && i.fract() == 0.0 {
                        a.get(i as usize).cloned().unwrap_or(Value::Null)
                    } else {
                        Value::Null
                    }
                }
                (Value::Object(_), Value::String(k)) => prop(&obj, k),
                _ => Value::Null,
            }
        }
        Expr::Star(obj) => {
            return Ok(Val::Many(match eval_expr(obj, s)?.value() {
                Value::Array(a) => a,
                Value::Object(m) => m.into_iter().map(|(_, v)| v).collect(),
                _ => Vec::new(),
            }));
        }
        Expr::Not(inner) => Value::Bool(!truthy(&eval_expr(inner, s)?.value())),
        Expr::Bin(op, l, r) => return eval_binary(op, l, r, s).map(Val::One),
        Expr::Call(name, args) => call(name, args, s)?,
    }))
}

fn eval_binary(op: &str, l: &Expr, r: &Expr, s: &Scope<'_>) -> Result<Value, String> {
    use std::cmp::Ordering::{Greater, Less};
    let lhs = eval_expr(l, s)?.value();
    // `&&` and `||` short-circuit and give back an operand.
    match op {
        "&&" if !truthy(&lhs) => return Ok(lhs),
        "||" if truthy(&lhs) => return Ok(lhs),
        "&&" | "||" => return Ok(eval_expr(r, s)?.value()),
        _ => {}
    }
    let rhs = eval_expr(r, s)?.value();
    let ord = compare(&lhs, &rhs);
    Ok(Value::Bool(match op {
        "==" => loose_eq(&lhs, &rhs),
        "!=" => !loose_eq(&lhs, &rhs),
        "<" => ord == Some(Less),
        ">" => ord == Some(Greater),
        "<=" => matches!(ord, Some(o) if o != Greater),
        ">=" => matches!(ord, Some(o) if o != Less),
        _ => unreachable!("{op}"),
    }))
}

fn call(name: &str, args: &[Expr], s: &Scope<'_>) -> Result<Value, String> {
    let mut vals = Vec::new();
    for a in args {
        vals.push(eval_expr(a, s)?.value());
    }
    let arity = |lo: usize, hi: usize| {
        if (lo..=hi).contains(&vals.len()) {
            Ok(())
        } else {
            Err(format!(
                "{name}() takes {lo}..={hi} arguments, got {}",
                vals.len()
            ))
        }
    };
    let text = |i: usize| to_text(&vals[i]);
    Ok(match name {
        "success" | "failure" | "always" | "cancelled" => {
            arity(0, 0)?;
            Value::Bool(match name {
                "success" => s.status.success,
                "failure" => s.status.failure,
                "cancelled" => s.status.cancelled,
                _ => true,
            })
        }
        "fromjson" => {
            arity(1, 1)?;
            serde_json::from_str(&text(0)).map_err(|e| format!("fromJSON('{}'): {e}", text(0)))?
        }
        "tojson" => {
            arity(1, 1)?;
            Value::String(serde_json::to_string_pretty(&vals[0]).unwrap())
        }
        "contains" => {
            arity(2, 2)?;
            Value::Bool(match &vals[0] {
                Value::Array(items) => items.iter().any(|v| loose_eq(v, &vals[1])),
                _ => text(0).to_lowercase().contains(&text(1).to_lowercase()),
            })
        }
        "startswith" | "endswith" => {
            arity(2, 2)?;
            let (hay, needle) = (text(0).to_lowercase(), text(1).to_lowercase());
            Value::Bool(if name == "startswith" {
                hay.starts_with(&needle)
            } else {
                hay.ends_with(&needle)
            })
        }
        "format" => {
            arity(1, usize::MAX)?;
            Value::String(format_fn(&text(0), &vals[1..])?)
        }
        "join" => {
            arity(1, 2)?;
            let sep = if vals.len() == 2 { text(1) } else { ",".into() };
            Value::String(match &vals[0] {
                Value::Array(items) => items.iter().map(to_text).collect::<Vec<_>>().join(&sep),
                other => to_text(other),
            })
        }
        "hashfiles" => {
            arity(1, usize::MAX)?;
            let ws = s.workspace.ok_or("hashFiles() outside a job")?;
            let patterns: Vec<String> = (0..vals.len()).map(text).collect();
            Value::String(super::glob::hash_files(ws, &patterns))
        }
        other => return Err(format!("unknown function {other}()")),
    })
}

/// `format('{0} and {{literal}}', x)`.
fn format_fn(fmt: &str, args: &[Value]) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = fmt;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            out.push_str(&tail[..1]);
            rest = &tail[2..];
        } else if let Some(close) = tail.strip_prefix('{').and_then(|t| t.find('}')) {
            let n: usize = tail[1..=close]
                .parse()
                .map_err(|_| format!("format('{fmt}'): bad placeholder"))?;
            let v = args
                .get(n)
                .ok_or_else(|| format!("format('{fmt}'): no argument {n}"))?;
            out.push_str(&to_text(v));
            rest = &tail[close + 2..];
        } else {
            return Err(format!("format('{fmt}'): unbalanced brace"));
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// Evaluates one expression (without `${{ }}`).
pub fn eval(src: &str, scope: &Scope<'_>) -> Result<Value, String> {
    Ok(eval_expr(&parse(src)?, scope)?.value())
}

fn uses_status_fn(e: &Expr) -> bool {
    match e {
        Expr::Call(name, args) => {
            matches!(
                name.as_str(),
                "success" | "failure" | "always" | "cancelled"
            ) || args.iter().any(uses_status_fn)
        }
        Expr::Prop(a, _) | Expr::Star(a) | Expr::Not(a) => uses_status_fn(a),
        Expr::Index(a, b) | Expr::Bin(_, a, b) => uses_status_fn(a) || uses_status_fn(b),
        Expr::Lit(_) | Expr::Ctx(_) => false,
    }
}

/// An `if:` condition: with or without `${{ }}`, empty meaning `success()`, and
/// `success() && (…)` implied when it calls no status function.
pub fn eval_if(src: &str, scope: &Scope<'_>) -> Result<bool, String> {
    let src = src.trim();
    let inner = match src.strip_prefix("${{").and_then(|s| s.strip_suffix("}}")) {
        Some(inner) if !inner.contains("${{") => inner.trim(),
        _ if src.contains("${{") => &render(src, scope)?,
        _ => src,
    };
    if inner.is_empty() {
        return Ok(scope.status.success);
    }
    let e = parse(inner).map_err(|e| format!("if: {inner}: {e}"))?;
    if !uses_status_fn(&e) && !scope.status.success {
        return Ok(false);
    }
    Ok(truthy(&eval_expr(&e, scope)?.value()))
}

/// Where the `${{ … }}` starting at `open` ends (the index of its `}}`), skipping `}}` inside
/// string literals.
fn close_of(text: &str, open: usize) -> Option<usize> {
    let b = text.as_bytes();
    let (mut i, mut quoted) = (open + 3, false);
    while i + 1 < b.len() {
        match b[i] {
            b'\'' => quoted = !quoted,
            b'}' if !quoted && b[i + 1] == b'}' => return Some(i),
            _ => {}
        }
        i += 1;
    }
    None
}

/// `text` with every `${{ … }}` replaced by its value as text.
pub fn render(text: &str, scope: &Scope<'_>) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = 0;
    while let Some(p) = text[rest..].find("${{") {
        let open = rest + p;
        let close = close_of(text, open).ok_or_else(|| format!("unclosed ${{{{ in `{text}`"))?;
        out.push_str(&text[rest..open]);
        let v = eval(text[open + 3..close].trim(), scope)?;
        out.push_str(&to_text(&v));
        rest = close + 2;
    }
    out.push_str(&text[rest..]);
    Ok(out)
}

/// A value: the expression's own value when `text` is exactly one `${{ … }}` (so a matrix can
/// be `${{ fromJSON(…) }}`), else the rendered text.
pub fn render_value(text: &str, scope: &Scope<'_>) -> Result<Value, String> {
    let t = text.trim();
    if t.starts_with("${{") && close_of(t, 0) == Some(t.len() - 2) {
        return eval(t[3..t.len() - 2].trim(), scope);
    }
    render(text, scope).map(Value::String)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn with<T>(status: Status, f: impl FnOnce(&Scope<'_>) -> T) -> T {
        let ctx = json!({
            "github": {"run_attempt": "2", "ref": "refs/heads/main", "event_name": "push"},
            "needs": {"plan": {"result": "success", "outputs": {"run-gcc": "", "m": "{\"include\":[{\"a\":1}]}"}},
                      "run": {"result": "failure", "outputs": {}}},
            "steps": {"build": {"outcome": "failure", "conclusion": "success", "outputs": {"sha256": "ab"}}},
            "matrix": {"cell-id": "linux-x86_64-x"},
            "env": {"CELL_ATTEMPT": "2"},
        });
        let ctx = ctx.as_object().unwrap();
        f(&Scope {
            contexts: ctx,
            status,
            workspace: None,
        })
    }

    fn ev(src: &str) -> Value {
        with(Status::OK, |s| eval(src, s).unwrap())
    }

    #[test]
    fn literals_operators_and_contexts() {
        assert_eq!(ev("1 == '1'"), json!(true));
        assert_eq!(ev("'' == 0"), json!(true));
        assert_eq!(ev("null == 0"), json!(true));
        assert_eq!(ev("true == 1"), json!(true));
        assert_eq!(ev("'ABC' == 'abc'"), json!(true));
        assert_eq!(ev("'a' != 'b' && 'x' || 'y'"), json!("x"));
        assert_eq!(ev("'' || 'fallback'"), json!("fallback"));
        assert_eq!(ev("!(1 < 2)"), json!(false));
        assert_eq!(ev("0x10 > 15.5"), json!(true));
        assert_eq!(ev("'it''s'"), json!("it's"));
        assert_eq!(ev("matrix.cell-id"), json!("linux-x86_64-x"));
        assert_eq!(ev("needs['plan'].outputs['run-gcc'] != ''"), json!(false));
        assert_eq!(ev("needs.PLAN.Result"), json!("success"));
        assert_eq!(ev("steps.build.outputs.sha256"), json!("ab"));
        assert_eq!(ev("steps.nope.outcome"), Value::Null);
        assert_eq!(ev("fromJSON(needs.plan.outputs.m).include[0].a"), json!(1));
        assert_eq!(ev("needs.*.result"), json!(["success", "failure"]));
        assert_eq!(ev("contains(needs.*.result, 'FAILURE')"), json!(true));
        assert_eq!(ev("contains('Hello', 'ell')"), json!(true));
        assert_eq!(ev("startsWith(github.ref, 'refs/heads/')"), json!(true));
        assert_eq!(ev("format('{0}-{1}{{x}}', 'a', 2)"), json!("a-2{x}"));
        assert_eq!(ev("join(fromJSON('[1,2]'), '+')"), json!("1+2"));
        assert_eq!(ev("toJSON(1)"), json!("1"));
        assert!(with(Status::OK, |s| eval("nope.x", s)).is_err());
    }

    #[test]
    fn conditions_imply_success_unless_they_ask_for_a_status() {
        let failed = Status {
            success: false,
            failure: true,
            cancelled: false,
        };
        with(failed, |s| {
            assert!(!eval_if("github.event_name == 'push'", s).unwrap());
            assert!(eval_if("always() && needs.plan.result == 'success'", s).unwrap());
            assert!(eval_if("${{ failure() }}", s).unwrap());
            assert!(!eval_if("", s).unwrap());
            assert!(eval_if("!cancelled()", s).unwrap());
        });
        with(Status::OK, |s| {
            assert!(eval_if("steps.build.outcome == 'failure'", s).unwrap());
            assert!(!eval_if("needs.plan.outputs.run-gcc != ''", s).unwrap());
        });
    }

    #[test]
    fn rendering_text_and_values() {
        with(Status::OK, |s| {
            assert_eq!(
                render("cell-${{ matrix.cell-id }}-a${{ env.CELL_ATTEMPT }}", s).unwrap(),
                "cell-linux-x86_64-x-a2"
            );
            assert_eq!(render("${{ 'a}}b' }}", s).unwrap(), "a}}b");
            assert_eq!(
                render_value("${{ fromJSON(needs.plan.outputs.m) }}", s).unwrap(),
                json!({"include": [{"a": 1}]})
            );
            assert_eq!(render_value("x ${{ 1 }}", s).unwrap(), json!("x 1"));
        });
    }
}
