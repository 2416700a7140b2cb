//! What the planning tests need beyond `cell-testkit` (its fixtures, projects and linters): a
//! fixture project loaded into a plan, which takes this crate's dependency on the model.

use cell_model::Plan;
use cell_testkit::planning::Project;

/// Loads a fixture [`Project`]: an extension, since the testkit does not depend on the model.
pub trait PlanOf {
    /// Its resolved plan.
    fn plan(&self) -> Plan;
}

impl PlanOf for Project {
    fn plan(&self) -> Plan {
        Plan::load(&self.root).unwrap_or_else(|e| panic!("fixture does not load: {e}"))
    }
}
