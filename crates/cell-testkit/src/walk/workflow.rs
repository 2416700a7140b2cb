//! The workflow file as the runner reads it: the events of `on` (one name, a list, or a
//! mapping keyed by event, as `pull_request` or `workflow_run` with their filters),
//! `on.workflow_dispatch.inputs` (none is fine: the `inputs` context is then empty), top-level
//! `env` and `defaults.run`, and per job `name`, `needs`, `if`, `runs-on`, `strategy` (a
//! literal matrix or one `${{ … }}`), `env`, `outputs`, `steps`, `timeout-minutes`,
//! `concurrency`, `continue-on-error` and `defaults.run`. Scalars are kept as the text YAML
//! gave (numbers and booleans too), since GitHub sees every value as a string until an
//! expression reads it. A key the walk does not know is an error, so nothing the generator
//! writes is silently ignored.

use serde_json::Value;

/// An ordered list of `key: value` strings (`env`, `with`, `outputs`).
pub type Pairs = Vec<(String, String)>;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Input {
    pub name: String,
    pub default: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunDefaults {
    pub shell: Option<String>,
    pub working_directory: Option<String>,
}

#[derive(Clone, Debug)]
pub enum Matrix {
    /// A mapping of lists, with `include` and `exclude`.
    Literal(serde_json::Map<String, Value>),
    /// One `${{ … }}` whose value is such a mapping.
    Expr(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Concurrency {
    pub group: String,
    pub cancel_in_progress: String,
}

#[derive(Clone, Debug, Default)]
pub struct Step {
    pub name: Option<String>,
    pub id: Option<String>,
    pub condition: Option<String>,
    pub env: Pairs,
    pub run: Option<String>,
    pub uses: Option<String>,
    pub with: Pairs,
    pub continue_on_error: Option<String>,
    pub working_directory: Option<String>,
    pub shell: Option<String>,
    pub timeout_minutes: Option<String>,
}

#[derive(Clone, Debug)]
pub struct Job {
    pub id: String,
    pub name: Option<String>,
    pub needs: Vec<String>,
    pub condition: Option<String>,
    /// A label, a list of labels, or an expression, as text (JSON for a list).
    pub runs_on: Value,
    pub matrix: Option<Matrix>,
    pub fail_fast: bool,
    pub env: Pairs,
    pub outputs: Pairs,
    pub steps: Vec<Step>,
    pub timeout_minutes: Option<String>,
    pub concurrency: Option<Concurrency>,
    pub continue_on_error: Option<String>,
    pub defaults: RunDefaults,
}

#[derive(Clone, Debug)]
pub struct Workflow {
    pub name: String,
    /// The events of `on`, in file order.
    pub events: Vec<String>,
    pub inputs: Vec<Input>,
    pub env: Pairs,
    pub defaults: RunDefaults,
    /// In file order.
    pub jobs: Vec<Job>,
}

/// A scalar as GitHub's text; `None` for a mapping or a list.
pub fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::Null => Some(String::new()),
        Value::Array(_) | Value::Object(_) => None,
    }
}

fn map<'a>(v: &'a Value, what: &str) -> Result<&'a serde_json::Map<String, Value>, String> {
    v.as_object()
        .ok_or_else(|| format!("{what}: expected a mapping"))
}

fn pairs(v: Option<&Value>, what: &str) -> Result<Pairs, String> {
    let Some(v) = v else { return Ok(Vec::new()) };
    map(v, what)?
        .iter()
        .map(|(k, v)| {
            let s = scalar(v).ok_or_else(|| format!("{what}.{k}: expected a scalar"))?;
            Ok((k.clone(), s))
        })
        .collect()
}

fn text(v: Option<&Value>, what: &str) -> Result<Option<String>, String> {
    v.map(|v| scalar(v).ok_or_else(|| format!("{what}: expected a scalar")))
        .transpose()
}

fn check_keys(
    m: &serde_json::Map<String, Value>,
    known: &[&str],
    what: &str,
) -> Result<(), String> {
    match m.keys().find(|k| !known.contains(&k.as_str())) {
        Some(k) => Err(format!("{what}: the walk does not know the key `{k}`")),
        None => Ok(()),
    }
}

fn defaults(v: Option<&Value>, what: &str) -> Result<RunDefaults, String> {
    let Some(run) = v.and_then(|d| d.get("run")) else {
        return Ok(RunDefaults::default());
    };
    let run = map(run, what)?;
    check_keys(run, &["shell", "working-directory"], what)?;
    Ok(RunDefaults {
        shell: text(run.get("shell"), what)?,
        working_directory: text(run.get("working-directory"), what)?,
    })
}

fn step(v: &Value, what: &str) -> Result<Step, String> {
    let m = map(v, what)?;
    check_keys(
        m,
        &[
            "name",
            "id",
            "if",
            "env",
            "run",
            "uses",
            "with",
            "continue-on-error",
            "working-directory",
            "shell",
            "timeout-minutes",
        ],
        what,
    )?;
    let s = Step {
        name: text(m.get("name"), what)?,
        id: text(m.get("id"), what)?,
        condition: text(m.get("if"), what)?,
        env: pairs(m.get("env"), &format!("{what}.env"))?,
        run: text(m.get("run"), what)?,
        uses: text(m.get("uses"), what)?,
        with: pairs(m.get("with"), &format!("{what}.with"))?,
        continue_on_error: text(m.get("continue-on-error"), what)?,
        working_directory: text(m.get("working-directory"), what)?,
        shell: text(m.get("shell"), what)?,
        timeout_minutes: text(m.get("timeout-minutes"), what)?,
    };
    if s.run.is_some() == s.uses.is_some() {
        return Err(format!(
            "{what}: a step has exactly one of `run` and `uses`"
        ));
    }
    Ok(s)
}

fn strategy(v: Option<&Value>, what: &str) -> Result<(Option<Matrix>, bool), String> {
    let Some(v) = v else { return Ok((None, true)) };
    let m = map(v, what)?;
    check_keys(m, &["matrix", "fail-fast", "max-parallel"], what)?;
    let fail_fast = text(m.get("fail-fast"), what)?.is_none_or(|s| s != "false");
    let matrix = match m.get("matrix") {
        None => None,
        Some(Value::Object(lit)) => Some(Matrix::Literal(lit.clone())),
        Some(Value::String(e)) => Some(Matrix::Expr(e.clone())),
        Some(_) => return Err(format!("{what}.matrix: a mapping or an expression")),
    };
    Ok((matrix, fail_fast))
}

fn concurrency(v: Option<&Value>, what: &str) -> Result<Option<Concurrency>, String> {
    Ok(match v {
        None => None,
        Some(Value::String(g)) => Some(Concurrency {
            group: g.clone(),
            cancel_in_progress: "false".into(),
        }),
        Some(v) => {
            let m = map(v, what)?;
            check_keys(m, &["group", "cancel-in-progress", "queue"], what)?;
            Some(Concurrency {
                group: text(m.get("group"), what)?.unwrap_or_default(),
                cancel_in_progress: text(m.get("cancel-in-progress"), what)?
                    .unwrap_or_else(|| "false".into()),
            })
        }
    })
}

/// The event names of `on`: one name, a list of names, or a mapping by name (its filters,
/// `branches`, `types`, `workflows`, are GitHub's business: the test picks the event).
fn events(on: Option<&Value>) -> Result<Vec<String>, String> {
    match on {
        None => Ok(Vec::new()),
        Some(Value::String(s)) => Ok(vec![s.clone()]),
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| match v {
                Value::String(s) => Ok(s.clone()),
                _ => Err("on: a list of event names".to_owned()),
            })
            .collect(),
        Some(Value::Object(m)) => Ok(m.keys().cloned().collect()),
        Some(_) => Err("on: an event name, a list or a mapping".into()),
    }
}

fn job(id: &str, v: &Value) -> Result<Job, String> {
    let what = format!("jobs.{id}");
    let m = map(v, &what)?;
    check_keys(
        m,
        &[
            "name",
            "needs",
            "if",
            "runs-on",
            "strategy",
            "env",
            "outputs",
            "steps",
            "timeout-minutes",
            "concurrency",
            "continue-on-error",
            "defaults",
            "permissions",
            "environment",
        ],
        &what,
    )?;
    let needs = match m.get("needs") {
        None => Vec::new(),
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => a.iter().filter_map(scalar).collect(),
        Some(_) => return Err(format!("{what}.needs: a job id or a list")),
    };
    let (matrix, fail_fast) = strategy(m.get("strategy"), &format!("{what}.strategy"))?;
    let steps = m
        .get("steps")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("{what}: no steps"))?
        .iter()
        .enumerate()
        .map(|(i, s)| step(s, &format!("{what}.steps[{i}]")))
        .collect::<Result<_, _>>()?;
    Ok(Job {
        id: id.to_owned(),
        name: text(m.get("name"), &what)?,
        needs,
        condition: text(m.get("if"), &what)?,
        runs_on: m.get("runs-on").cloned().unwrap_or(Value::Null),
        matrix,
        fail_fast,
        env: pairs(m.get("env"), &format!("{what}.env"))?,
        outputs: pairs(m.get("outputs"), &format!("{what}.outputs"))?,
        steps,
        timeout_minutes: text(m.get("timeout-minutes"), &what)?,
        concurrency: concurrency(m.get("concurrency"), &format!("{what}.concurrency"))?,
        continue_on_error: text(m.get("continue-on-error"), &what)?,
        defaults: defaults(m.get("defaults"), &format!("{what}.defaults"))?,
    })
}

impl Workflow {
    /// Reads a workflow file's YAML.
    pub fn parse(yaml: &str) -> Result<Self, String> {
        let doc: Value = serde_norway::from_str(yaml).map_err(|e| format!("YAML: {e}"))?;
        let top = map(&doc, "the workflow")?;
        let inputs = top
            .get("on")
            .and_then(|on| on.get("workflow_dispatch"))
            .and_then(|d| d.get("inputs"))
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .map(|(name, i)| Input {
                        name: name.clone(),
                        default: i.get("default").and_then(scalar).unwrap_or_default(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let jobs = map(top.get("jobs").unwrap_or(&Value::Null), "jobs")?
            .iter()
            .map(|(id, j)| job(id, j))
            .collect::<Result<Vec<_>, _>>()?;
        for j in &jobs {
            if let Some(n) = j.needs.iter().find(|n| !jobs.iter().any(|o| &o.id == *n)) {
                return Err(format!("jobs.{}: needs `{n}`, which is no job", j.id));
            }
        }
        Ok(Self {
            name: top.get("name").and_then(scalar).unwrap_or_default(),
            events: events(top.get("on"))?,
            inputs,
            env: pairs(top.get("env"), "env")?,
            defaults: defaults(top.get("defaults"), "defaults")?,
            jobs,
        })
    }

    pub fn job(&self, id: &str) -> Option<&Job> {
        self.jobs.iter().find(|j| j.id == id)
    }

    /// The jobs in an order where every job comes after the jobs it needs (file order among
    /// the ready ones), or an error naming a cycle.
    pub fn ordered(&self) -> Result<Vec<&Job>, String> {
        let mut done: Vec<&str> = Vec::new();
        let mut out = Vec::new();
        while out.len() < self.jobs.len() {
            let ready = self.jobs.iter().find(|j| {
                !done.contains(&j.id.as_str()) && j.needs.iter().all(|n| done.contains(&n.as_str()))
            });
            let Some(j) = ready else {
                return Err("the jobs' needs form a cycle".into());
            };
            done.push(&j.id);
            out.push(j);
        }
        Ok(out)
    }
}

/// The combinations of a matrix value, GitHub's way: the product of the list-valued keys,
/// less `exclude`, then each `include` entry added to every combination it does not
/// contradict on an original key, or as a combination of its own when it extends none.
pub fn expand_matrix(m: &serde_json::Map<String, Value>) -> Result<Vec<Value>, String> {
    let mut combos: Vec<serde_json::Map<String, Value>> = vec![serde_json::Map::new()];
    let keys: Vec<&String> = m
        .keys()
        .filter(|k| *k != "include" && *k != "exclude")
        .collect();
    for k in &keys {
        let values = m[*k]
            .as_array()
            .ok_or_else(|| format!("matrix.{k}: expected a list"))?;
        combos = combos
            .iter()
            .flat_map(|c| {
                values.iter().map(move |v| {
                    let mut c = c.clone();
                    c.insert((*k).clone(), v.clone());
                    c
                })
            })
            .collect();
    }
    if keys.is_empty() {
        combos.clear();
    }
    let entries = |key: &str| -> Vec<serde_json::Map<String, Value>> {
        m.get(key)
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(|v| v.as_object().cloned()).collect())
            .unwrap_or_default()
    };
    for ex in entries("exclude") {
        combos.retain(|c| !ex.iter().all(|(k, v)| c.get(k) == Some(v)));
    }
    let originals = combos.len();
    for inc in entries("include") {
        let mut extended = false;
        for c in combos.iter_mut().take(originals) {
            let on_original = inc
                .iter()
                .filter(|(k, _)| keys.contains(k))
                .all(|(k, v)| c.get(k) == Some(v));
            if on_original {
                for (k, v) in &inc {
                    if !keys.contains(&k) {
                        c.insert(k.clone(), v.clone());
                    }
                }
                extended = true;
            }
        }
        if !extended {
            combos.push(inc);
        }
    }
    Ok(combos.into_iter().map(Value::Object).collect())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn matrix_products_excludes_and_includes() {
        let m = json!({"os": ["a", "b"], "v": [1, 2], "exclude": [{"os": "b", "v": 2}],
                       "include": [{"os": "a", "extra": "x"}, {"os": "c", "v": 9}]});
        let got = expand_matrix(m.as_object().unwrap()).unwrap();
        assert_eq!(
            got,
            vec![
                json!({"os": "a", "v": 1, "extra": "x"}),
                json!({"os": "a", "v": 2, "extra": "x"}),
                json!({"os": "b", "v": 1}),
                json!({"os": "c", "v": 9}),
            ]
        );
        let only = json!({"include": [{"cell": "x"}, {"cell": "y"}]});
        assert_eq!(expand_matrix(only.as_object().unwrap()).unwrap().len(), 2);
    }

    #[test]
    fn parses_jobs_in_order_and_refuses_unknown_keys() {
        let wf = Workflow::parse(
            "on: {workflow_dispatch: {inputs: {reps: {default: 3}}}}\njobs:\n  b: {needs: a, runs-on: x, steps: [{run: 'true'}]}\n  a: {runs-on: x, steps: [{uses: actions/checkout@v4, with: {fetch-depth: 0}}]}\n",
        )
        .unwrap();
        assert_eq!(wf.inputs[0].default, "3");
        let order: Vec<&str> = wf
            .ordered()
            .unwrap()
            .iter()
            .map(|j| j.id.as_str())
            .collect();
        assert_eq!(order, ["a", "b"]);
        assert_eq!(wf.job("a").unwrap().steps[0].with[0].1, "0");
        let err = Workflow::parse("jobs:\n  a: {runs-on: x, steps: [{run: x, bogus: 1}]}\n");
        assert!(err.unwrap_err().contains("bogus"));
    }

    #[test]
    fn the_events_of_on_in_each_form_and_no_inputs_without_workflow_dispatch() {
        let steps = "jobs:\n  a: {runs-on: x, steps: [{run: 'true'}]}\n";
        for (on, want) in [
            ("on: pull_request", vec!["pull_request"]),
            ("on: [push, pull_request]", vec!["push", "pull_request"]),
            (
                "on:\n  pull_request:\n    types: [opened, synchronize]\n  workflow_dispatch:",
                vec!["pull_request", "workflow_dispatch"],
            ),
            (
                "on:\n  workflow_run:\n    workflows: [cell-pr]\n    types: [completed]",
                vec!["workflow_run"],
            ),
        ] {
            let wf = Workflow::parse(&format!("{on}\n{steps}")).unwrap();
            assert_eq!(wf.events, want, "{on}");
            assert!(wf.inputs.is_empty(), "{on}");
        }
    }
}
