//! How much of the history a report carries: per cell its newest runs only, so the folder
//! stays publishable however long the history grows. The window is chosen here, once, when
//! the model is built ([`Report::build`](super::Report::build)); every exporter reads the
//! model and none chooses again.

use std::num::NonZeroUsize;

use serde::Serialize;

/// Runs per cell the report carries unless told otherwise: about three months of daily runs.
pub const DEFAULT_LAST: usize = 100;

/// What a report is built over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReportOptions {
    /// Each cell's newest `last` runs feed its charts, series, tables and CSV records
    /// (`None`: every run of the history).
    pub last: Option<NonZeroUsize>,
    /// Keep every timed process of the runs in the window, for `samples.csv`.
    pub samples: bool,
}

impl ReportOptions {
    /// Every run of the history, and every sample of them.
    pub const EVERYTHING: Self = Self {
        last: None,
        samples: true,
    };
}

impl Default for ReportOptions {
    /// The newest [`DEFAULT_LAST`] runs of each cell, no samples.
    fn default() -> Self {
        Self {
            last: NonZeroUsize::new(DEFAULT_LAST),
            samples: false,
        }
    }
}

/// What a window left out of a list of runs (a cell's, or the whole history's): the oldest
/// ones, counted, and the first and last of them named.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LeftOut {
    /// The window: the newest `last` runs of each cell are kept.
    pub last: usize,
    /// Runs there are, those left out included.
    pub runs: usize,
    /// Runs left out.
    pub left_out: usize,
    /// The oldest run left out.
    pub oldest: String,
    /// The newest run left out.
    pub newest: String,
}

/// The newest `last` of `items` (given oldest first); all of them when `last` is `None` or
/// at least their number.
pub fn window<T>(items: &[T], last: Option<NonZeroUsize>) -> &[T] {
    let keep = last.map_or(items.len(), |n| n.get().min(items.len()));
    &items[items.len() - keep..]
}

impl LeftOut {
    /// What a window left out of `runs` (each a name, oldest first, and whether the window
    /// kept it), or `None` when it kept every one.
    pub(crate) fn of(
        runs: impl IntoIterator<Item = (String, bool)>,
        last: Option<NonZeroUsize>,
    ) -> Option<Self> {
        let mut total = 0;
        let mut out: Vec<String> = Vec::new();
        for (name, kept) in runs {
            total += 1;
            if !kept {
                out.push(name);
            }
        }
        Some(Self {
            last: last?.get(),
            runs: total,
            left_out: out.len(),
            oldest: out.first()?.clone(),
            newest: out.last()?.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(v: usize) -> Option<NonZeroUsize> {
        NonZeroUsize::new(v)
    }

    #[test]
    fn the_window_is_the_newest_runs() {
        let runs = [1, 2, 3, 4, 5];
        assert_eq!(window(&runs, n(3)), &[3, 4, 5]);
        assert_eq!(window(&runs, n(1)), &[5]);
        assert_eq!(window(&runs, n(5)), &runs);
    }

    #[test]
    fn a_window_wider_than_the_history_keeps_all_of_it() {
        let runs = [1, 2];
        assert_eq!(window(&runs, n(100)), &runs);
        assert_eq!(window(&runs, None), &runs);
        assert!(window::<u8>(&[], n(3)).is_empty());
    }

    #[test]
    fn what_was_left_out_is_counted_and_its_ends_named() {
        let runs = ["a", "b", "c", "d", "e"].map(|r| (r.to_owned(), r >= "d"));
        assert_eq!(
            LeftOut::of(runs, n(2)),
            Some(LeftOut {
                last: 2,
                runs: 5,
                left_out: 3,
                oldest: "a".into(),
                newest: "c".into(),
            })
        );
    }

    #[test]
    fn nothing_left_out_is_no_note() {
        let runs = ["a", "b"].map(|r| (r.to_owned(), true));
        assert_eq!(LeftOut::of(runs.clone(), n(2)), None);
        assert_eq!(LeftOut::of(runs, None), None);
    }

    #[test]
    fn the_default_is_a_hundred_runs_and_no_samples() {
        let d = ReportOptions::default();
        assert_eq!(d.last.map(NonZeroUsize::get), Some(DEFAULT_LAST));
        assert!(!d.samples);
        assert_eq!(ReportOptions::EVERYTHING.last, None);
    }
}
