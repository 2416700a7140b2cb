//! A small strict JSON (RFC 8259) reader and writer, enough to bind one flat
//! record and to serialise flat objects.
//!
//! Reading: the whole text must be valid UTF-8 (checked once, up front, so
//! invalid UTF-8 inside a skipped field is refused too); strings are
//! unescaped (a surrogate pair must be whole; a lone surrogate is refused)
//! and borrowed from the input when they hold no escape; control characters
//! in strings, leading zeros, `NaN`, comments and trailing commas are
//! refused; skipped values are checked to the same grammar, nested at most
//! `MAX_DEPTH` deep. Nothing but whitespace may follow the top-level value.

use std::borrow::Cow;

/// How many arrays and objects a skipped value may nest.
pub const MAX_DEPTH: usize = 32;

/// The text is not JSON, or not the JSON asked for.
#[derive(Debug, PartialEq, Eq)]
pub struct Invalid;

pub type Result<T> = std::result::Result<T, Invalid>;

/// Reads one top-level object, member by member.
pub struct Reader<'a> {
    text: &'a str,
    pos: usize,
    /// Before the first member of the object: no `,` expected.
    first: bool,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Result<Self> {
        let text = std::str::from_utf8(bytes).map_err(|_| Invalid)?;
        Ok(Reader {
            text,
            pos: 0,
            first: true,
        })
    }

    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    fn peek(&self) -> Option<u8> {
        self.bytes().get(self.pos).copied()
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    fn eat(&mut self, b: u8) -> Result<()> {
        if self.peek() == Some(b) {
            self.pos += 1;
            Ok(())
        } else {
            Err(Invalid)
        }
    }

    fn literal(&mut self, word: &[u8]) -> Result<()> {
        if self.bytes()[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(Invalid)
        }
    }

    /// The `{` of the top-level object.
    pub fn begin_object(&mut self) -> Result<()> {
        self.ws();
        self.eat(b'{')?;
        self.first = true;
        Ok(())
    }

    /// The next member's key (its `:` consumed), or `None` at the `}`.
    pub fn next_key(&mut self) -> Result<Option<Cow<'a, str>>> {
        self.ws();
        if self.first {
            self.first = false;
            if self.peek() == Some(b'}') {
                self.pos += 1;
                return Ok(None);
            }
        } else {
            match self.peek() {
                Some(b',') => {
                    self.pos += 1;
                    self.ws();
                }
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(None);
                }
                _ => return Err(Invalid),
            }
        }
        let key = self.string()?;
        self.ws();
        self.eat(b':')?;
        Ok(Some(key))
    }

    /// After the top-level value: nothing but whitespace.
    pub fn end(mut self) -> Result<()> {
        self.ws();
        if self.pos == self.text.len() {
            Ok(())
        } else {
            Err(Invalid)
        }
    }

    /// A string value, unescaped.
    pub fn string(&mut self) -> Result<Cow<'a, str>> {
        self.ws();
        self.eat(b'"')?;
        let bytes = self.bytes();
        let start = self.pos;
        let mut i = start;
        // Fast path: no escape, borrow.
        loop {
            match bytes.get(i) {
                None => return Err(Invalid),
                Some(b'"') => {
                    self.pos = i + 1;
                    return Ok(Cow::Borrowed(&self.text[start..i]));
                }
                Some(b'\\') => break,
                Some(&b) if b < 0x20 => return Err(Invalid),
                Some(_) => i += 1,
            }
        }
        let mut s = String::with_capacity(i - start + 16);
        s.push_str(&self.text[start..i]);
        loop {
            match bytes.get(i) {
                None => return Err(Invalid),
                Some(b'"') => {
                    self.pos = i + 1;
                    return Ok(Cow::Owned(s));
                }
                Some(b'\\') => {
                    let escape = *bytes.get(i + 1).ok_or(Invalid)?;
                    i += 2;
                    let c = match escape {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let (c, used) = unicode_escape(&bytes[i..])?;
                            i += used;
                            c
                        }
                        _ => return Err(Invalid),
                    };
                    s.push(c);
                }
                Some(&b) if b < 0x20 => return Err(Invalid),
                Some(_) => {
                    // Up to the next byte that needs a look; those are all
                    // ASCII, so both ends are char boundaries.
                    let run = bytes[i..]
                        .iter()
                        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                        .map_or(bytes.len(), |p| i + p);
                    s.push_str(&self.text[i..run]);
                    i = run;
                }
            }
        }
    }

    /// A number that is an unsigned integer fitting a `u64`: no sign, no
    /// fraction, no exponent, no leading zero.
    pub fn u64(&mut self) -> Result<u64> {
        self.ws();
        let bytes = self.bytes();
        let n = match self.peek() {
            Some(b'0') => {
                self.pos += 1;
                0
            }
            Some(b'1'..=b'9') => {
                let mut n: u64 = 0;
                while let Some(&b) = bytes.get(self.pos).filter(|b| b.is_ascii_digit()) {
                    n = n
                        .checked_mul(10)
                        .and_then(|n| n.checked_add(u64::from(b - b'0')))
                        .ok_or(Invalid)?;
                    self.pos += 1;
                }
                n
            }
            _ => return Err(Invalid),
        };
        match self.peek() {
            Some(b'.' | b'e' | b'E' | b'0'..=b'9') => Err(Invalid),
            _ => Ok(n),
        }
    }

    /// `true` or `false`.
    pub fn bool(&mut self) -> Result<bool> {
        self.ws();
        match self.peek() {
            Some(b't') => self.literal(b"true").map(|()| true),
            Some(b'f') => self.literal(b"false").map(|()| false),
            _ => Err(Invalid),
        }
    }

    /// Any value, checked and thrown away.
    pub fn skip_value(&mut self) -> Result<()> {
        self.skip(0)
    }

    fn skip(&mut self, depth: usize) -> Result<()> {
        if depth >= MAX_DEPTH {
            return Err(Invalid);
        }
        self.ws();
        match self.peek().ok_or(Invalid)? {
            b'"' => self.string().map(drop),
            b'{' => {
                self.pos += 1;
                self.ws();
                if self.peek() == Some(b'}') {
                    self.pos += 1;
                    return Ok(());
                }
                loop {
                    self.string()?;
                    self.ws();
                    self.eat(b':')?;
                    self.skip(depth + 1)?;
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.pos += 1,
                        Some(b'}') => {
                            self.pos += 1;
                            return Ok(());
                        }
                        _ => return Err(Invalid),
                    }
                }
            }
            b'[' => {
                self.pos += 1;
                self.ws();
                if self.peek() == Some(b']') {
                    self.pos += 1;
                    return Ok(());
                }
                loop {
                    self.skip(depth + 1)?;
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.pos += 1,
                        Some(b']') => {
                            self.pos += 1;
                            return Ok(());
                        }
                        _ => return Err(Invalid),
                    }
                }
            }
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            b'-' | b'0'..=b'9' => self.skip_number(),
            _ => Err(Invalid),
        }
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    fn skip_number(&mut self) -> Result<()> {
        let bytes = self.bytes();
        let mut i = self.pos;
        let digits = |i: usize| bytes[i..].iter().take_while(|b| b.is_ascii_digit()).count();
        if bytes.get(i) == Some(&b'-') {
            i += 1;
        }
        match bytes.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => i += digits(i),
            _ => return Err(Invalid),
        }
        if bytes.get(i) == Some(&b'.') {
            let n = digits(i + 1);
            if n == 0 {
                return Err(Invalid);
            }
            i += 1 + n;
        }
        if let Some(b'e' | b'E') = bytes.get(i) {
            i += 1;
            if let Some(b'+' | b'-') = bytes.get(i) {
                i += 1;
            }
            let n = digits(i);
            if n == 0 {
                return Err(Invalid);
            }
            i += n;
        }
        self.pos = i;
        Ok(())
    }
}

/// The four hex digits of a `\u` escape (just after the `u`), and a second
/// `\uXXXX` when the first is a high surrogate: the char and the bytes used.
fn unicode_escape(bytes: &[u8]) -> Result<(char, usize)> {
    let hi = hex4(bytes)?;
    let (code, used) = match hi {
        0xD800..=0xDBFF => {
            if bytes.get(4..6) != Some(b"\\u") {
                return Err(Invalid);
            }
            let lo = hex4(&bytes[6..])?;
            if !(0xDC00..=0xDFFF).contains(&lo) {
                return Err(Invalid);
            }
            (0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00), 10)
        }
        0xDC00..=0xDFFF => return Err(Invalid),
        _ => (hi, 4),
    };
    char::from_u32(code).map(|c| (c, used)).ok_or(Invalid)
}

fn hex4(bytes: &[u8]) -> Result<u32> {
    let digits = bytes.get(..4).ok_or(Invalid)?;
    digits.iter().try_fold(0u32, |n, &b| {
        let d = (b as char).to_digit(16).ok_or(Invalid)?;
        Ok(n << 4 | d)
    })
}

/// Writes one flat object: `{"k":v,...}`.
pub struct Object<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
}

impl<'a> Object<'a> {
    pub fn new(out: &'a mut Vec<u8>) -> Self {
        out.push(b'{');
        Object { out, first: true }
    }

    fn key(&mut self, key: &str) {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
        write_str(self.out, key);
        self.out.push(b':');
    }

    pub fn str(&mut self, key: &str, value: &str) -> &mut Self {
        self.key(key);
        write_str(self.out, value);
        self
    }

    pub fn u64(&mut self, key: &str, value: u64) -> &mut Self {
        self.key(key);
        write_u64(self.out, value);
        self
    }

    pub fn bool(&mut self, key: &str, value: bool) -> &mut Self {
        self.key(key);
        let text: &[u8] = if value { b"true" } else { b"false" };
        self.out.extend_from_slice(text);
        self
    }

    pub fn end(self) {
        self.out.push(b'}');
    }
}

/// A JSON string: `"` and `\` escaped, control characters as `\n`-style or
/// `\u00XX` escapes, everything else (non-ASCII too) as it is.
pub fn write_str(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = s.as_bytes();
    out.push(b'"');
    let mut done = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let short: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0x00..=0x1f => b"",
            _ => continue,
        };
        out.extend_from_slice(&bytes[done..i]);
        if short.is_empty() {
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(b >> 4)]);
            out.push(HEX[usize::from(b & 0xf)]);
        } else {
            out.extend_from_slice(short);
        }
        done = i + 1;
    }
    out.extend_from_slice(&bytes[done..]);
    out.push(b'"');
}

/// Decimal digits of `n`.
pub fn write_u64(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn string(src: &str) -> Result<String> {
        let mut r = Reader::new(src.as_bytes())?;
        let s = r.string()?.into_owned();
        r.end()?;
        Ok(s)
    }

    #[test]
    fn strings() {
        assert_eq!(string(r#""abc""#).unwrap(), "abc");
        assert_eq!(string(r#""a\"\\\/\b\f\n\r\tz""#).unwrap(), "a\"\\/\u{8}\u{c}\n\r\tz");
        assert_eq!(string(r#""\u00e9\ud83d\ude00é""#).unwrap(), "é😀é");
        for bad in [r#""\ud800""#, r#""\udc00""#, r#""\ud800\u0041""#, r#""\x""#, "\"a\nb\"", r#""abc"#, r#""\u12""#] {
            assert_eq!(string(bad), Err(Invalid), "{bad}");
        }
        assert!(Reader::new(b"\"\xff\"").is_err());
    }

    #[test]
    fn numbers_and_skipping() {
        let u = |s: &str| {
            let mut r = Reader::new(s.as_bytes())?;
            let n = r.u64()?;
            r.end().map(|()| n)
        };
        assert_eq!(u("0"), Ok(0));
        assert_eq!(u(" 18446744073709551615 "), Ok(u64::MAX));
        for bad in ["18446744073709551616", "-1", "-0", "1.0", "1e2", "01", "+1", ""] {
            assert_eq!(u(bad), Err(Invalid), "{bad}");
        }
        let skip = |s: &str| {
            let mut r = Reader::new(s.as_bytes())?;
            r.skip_value()?;
            r.end()
        };
        for good in ["-0.5e+3", "[1, {\"a\": [null, true, false]}, \"x\"]", "{}", "[]", "0"] {
            assert_eq!(skip(good), Ok(()), "{good}");
        }
        for bad in ["[1,]", "{\"a\":1,}", "01", "1.", "1e", "-", "nul", "[1 2]", "NaN", "{'a':1}"] {
            assert_eq!(skip(bad), Err(Invalid), "{bad}");
        }
        let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert_eq!(skip(&nested(MAX_DEPTH)), Ok(()));
        assert_eq!(skip(&nested(MAX_DEPTH + 1)), Err(Invalid));
    }

    #[test]
    fn writing() {
        let mut out = Vec::new();
        let mut o = Object::new(&mut out);
        o.str("name", "a\"\\\n\u{1}é").u64("age", 28).bool("adult", true);
        o.end();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"name":"a\"\\\n\u0001é","age":28,"adult":true}"#
        );
    }
}
