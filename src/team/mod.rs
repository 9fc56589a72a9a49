//! Who runs: the team of tasks and the collectives they use.
//!
//! The engine is written against [`Member`], one task's view of its team. The local team
//! ([`local::LocalTeam`]) is threads in this process; an MPI team (ranks x threads) implements
//! the same trait, so the engine does not change when it arrives.

pub mod local;

/// One task's handle on its team. Every collective must be called by every member of the team,
/// in the same order, or the team hangs; the engine therefore never leaves a phase early on an
/// error, it records the error and meets the others at the next collective.
pub trait Member: Send {
    /// This task's index in the team, 0-based; 0 leads (prints, gathers, writes the store).
    fn rank(&self) -> usize;
    /// Number of tasks in the team.
    fn size(&self) -> usize;
    /// Index of the node (client machine) this task runs on.
    fn node(&self) -> usize;
    /// Waits until every member has arrived.
    fn barrier(&self);
    /// Every member gets the largest of the values the members gave.
    fn max(&self, value: u64) -> u64;
    /// Every member gets the smallest of the values the members gave.
    fn min(&self, value: u64) -> u64;
    /// Every member gets the sum of the values the members gave.
    fn sum(&self, value: u64) -> u64;
    /// The leader gets every member's value, in rank order; the others get `None`.
    fn gather<T: Send + 'static>(&self, value: T) -> Option<Vec<T>>;
    /// Divides the team: members giving the same colour form a new team, ranked by their
    /// rank in this one.
    fn split(&self, colour: u64) -> Self
    where
        Self: Sized;
}
