//! A broker's commit log, reduced to what elections and the SSS depend on:
//! its length (max offset) and its epoch file — which master epoch wrote
//! each stretch of it (`<epoch, startOffset>` entries, as
//! `AutoSwitchHAService` keeps them). Two logs agree on an offset exactly
//! when the same epoch wrote it there, since one epoch has one master.

use std::fmt;

/// A commit log: `epochs` in ascending order, each with the offset its
/// stretch starts at; the log ends at `end`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Log {
    /// `(master epoch, start offset)`, ascending in both.
    pub epochs: Vec<(i32, i64)>,
    /// The max offset.
    pub end: i64,
}

impl fmt::Display for Log {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "log{:?}..{}", self.epochs, self.end)
    }
}

impl Log {
    /// The last epoch in the epoch file (−1 when there is none, as Java
    /// reports it).
    pub fn last_epoch(&self) -> i32 {
        self.epochs.last().map_or(-1, |e| e.0)
    }

    /// The start offset of `epoch`'s stretch, if this log has one.
    pub fn start_of(&self, epoch: i32) -> Option<i64> {
        self.epochs.iter().find(|e| e.0 == epoch).map(|e| e.1)
    }

    /// A master of `epoch` starts writing: a new stretch from the end.
    /// Empty stretches of earlier epochs are dropped, as they hold nothing.
    pub fn begin_epoch(&mut self, epoch: i32) {
        while self.epochs.last().is_some_and(|e| e.1 == self.end) {
            self.epochs.pop();
        }
        if self.epochs.last().is_none_or(|e| e.0 < epoch) {
            self.epochs.push((epoch, self.end));
        }
    }

    /// The master takes `bytes` of new messages.
    pub fn write(&mut self, bytes: i64) {
        if !self.epochs.is_empty() {
            self.end += bytes;
        }
    }

    /// The epoch that wrote `offset` (`None` past the end).
    fn epoch_at(&self, offset: i64) -> Option<i32> {
        if offset >= self.end {
            return None;
        }
        self.epochs
            .iter()
            .rev()
            .find(|e| e.1 <= offset)
            .map(|e| e.0)
    }

    /// How long a prefix the two logs share.
    pub fn common_prefix(&self, other: &Log) -> i64 {
        let limit = self.end.min(other.end);
        // The epochs can only change at a stretch boundary of either log.
        let mut points: Vec<i64> = self
            .epochs
            .iter()
            .chain(&other.epochs)
            .map(|e| e.1)
            .filter(|o| *o < limit)
            .collect();
        points.push(0);
        points.sort_unstable();
        points.dedup();
        for offset in points {
            if self.epoch_at(offset) != other.epoch_at(offset) {
                return offset;
            }
        }
        limit
    }

    /// The first `len` bytes of this log.
    pub fn prefix(&self, len: i64) -> Log {
        let len = len.min(self.end);
        Log {
            epochs: self
                .epochs
                .iter()
                .copied()
                .filter(|e| e.1 < len || (e.1 == len && len == self.end))
                .collect(),
            end: len,
        }
    }

    /// A slave's step of HA replication from `master`: truncate to what
    /// both logs share, then copy up to `chunk` more bytes.
    pub fn follow(&mut self, master: &Log, chunk: i64) {
        let common = self.common_prefix(master);
        *self = master.prefix(common.saturating_add(chunk));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(epochs: &[(i32, i64)], end: i64) -> Log {
        Log {
            epochs: epochs.to_vec(),
            end,
        }
    }

    #[test]
    fn logs_agree_up_to_the_first_offset_two_epochs_wrote_differently() {
        let master = log(&[(1, 0), (3, 100)], 250);
        assert_eq!(master.common_prefix(&log(&[(1, 0)], 80)), 80);
        // A stale master of epoch 2 wrote past 100 what epoch 3 overwrote.
        let stale = log(&[(1, 0), (2, 100)], 180);
        assert_eq!(master.common_prefix(&stale), 100);
        assert_eq!(stale.common_prefix(&master), 100);
        let mut slave = stale.clone();
        slave.follow(&master, 30);
        assert_eq!(slave, log(&[(1, 0), (3, 100)], 130));
        slave.follow(&master, 1_000);
        assert_eq!(slave, master);
    }

    #[test]
    fn a_new_epoch_starts_at_the_end() {
        let mut log = Log::default();
        log.write(10);
        assert_eq!(log.end, 0, "nothing is written before the first epoch");
        log.begin_epoch(1);
        log.write(50);
        log.begin_epoch(2);
        log.begin_epoch(3);
        assert_eq!(log.epochs, vec![(1, 0), (3, 50)]);
        assert_eq!(log.last_epoch(), 3);
        assert_eq!(log.start_of(3), Some(50));
        assert_eq!(log.prefix(50).epochs, vec![(1, 0), (3, 50)]);
        assert_eq!(log.prefix(40).epochs, vec![(1, 0)]);
    }
}
