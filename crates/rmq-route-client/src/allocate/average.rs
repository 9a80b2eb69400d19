//! The index-arithmetic strategies: contiguous blocks (`AVG`), round-robin
//! (`AVG_BY_CIRCLE`) and a fixed list (`CONFIG`): Java
//! `AllocateMessageQueueAveragely`, `AllocateMessageQueueAveragelyByCircle`,
//! `AllocateMessageQueueByConfig`.
//!
//! Owns only the arithmetic; inputs arrive sorted and pre-checked through
//! [`precheck`].

use super::{precheck, AllocateError, AllocateStrategy};
use crate::MessageQueue;

/// Java `AllocateMessageQueueAveragely` (`AVG`, the default): consumer `i`
/// of `k` gets a contiguous block; the first `n % k` consumers get one more.
#[derive(Debug, Clone, Copy, Default)]
pub struct AllocateAveragely;

impl AllocateStrategy for AllocateAveragely {
    fn name(&self) -> String {
        "AVG".into()
    }

    fn allocate(
        &self,
        _group: &str,
        current: &str,
        queues: &[MessageQueue],
        consumers: &[String],
    ) -> Result<Vec<MessageQueue>, AllocateError> {
        let Some(i) = precheck(current, queues, consumers)? else {
            return Ok(Vec::new());
        };
        let (n, k) = (queues.len(), consumers.len());
        let m = n % k;
        let size = if n <= k {
            1
        } else if m > 0 && i < m {
            n / k + 1
        } else {
            n / k
        };
        let start = if m > 0 && i < m {
            i * size
        } else {
            i * size + m
        };
        // Java's `range` may be ≤ 0 (more consumers than queues): nothing.
        let range = size.min(n.saturating_sub(start));
        Ok(queues[start.min(n)..start.min(n) + range].to_vec())
    }
}

/// Java `AllocateMessageQueueAveragelyByCircle` (`AVG_BY_CIRCLE`): consumer
/// `i` gets every queue whose index is `i` modulo the consumer count.
#[derive(Debug, Clone, Copy, Default)]
pub struct AllocateAveragelyByCircle;

impl AllocateStrategy for AllocateAveragelyByCircle {
    fn name(&self) -> String {
        "AVG_BY_CIRCLE".into()
    }

    fn allocate(
        &self,
        _group: &str,
        current: &str,
        queues: &[MessageQueue],
        consumers: &[String],
    ) -> Result<Vec<MessageQueue>, AllocateError> {
        let Some(i) = precheck(current, queues, consumers)? else {
            return Ok(Vec::new());
        };
        let k = consumers.len();
        Ok((i..queues.len())
            .filter(|j| j % k == i)
            .map(|j| queues[j].clone())
            .collect())
    }
}

/// Java `AllocateMessageQueueByConfig` (`CONFIG`): the configured list for
/// every consumer, inputs ignored, no pre-check (so several consumers read
/// the same queues). An unset list (Java `null`) allocates nothing.
#[derive(Debug, Clone, Default)]
pub struct AllocateByConfig {
    /// Java `messageQueueList`.
    pub queues: Option<Vec<MessageQueue>>,
}

impl AllocateByConfig {
    /// A strategy that always answers `queues`.
    pub fn new(queues: Vec<MessageQueue>) -> Self {
        AllocateByConfig {
            queues: Some(queues),
        }
    }
}

impl AllocateStrategy for AllocateByConfig {
    fn name(&self) -> String {
        "CONFIG".into()
    }

    fn allocate(
        &self,
        _group: &str,
        _current: &str,
        _queues: &[MessageQueue],
        _consumers: &[String],
    ) -> Result<Vec<MessageQueue>, AllocateError> {
        Ok(self.queues.clone().unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::allocate::tests::{all, eight, ids, queues, short};

    #[test]
    fn averagely_table() {
        // (queues, consumers, expected block per consumer in id order)
        let table: &[(i32, usize, &[&[i32]])] = &[
            (8, 3, &[&[0, 1, 2], &[3, 4, 5], &[6, 7]]),
            (2, 3, &[&[0], &[1], &[]]),
            (1, 3, &[&[0], &[], &[]]),
            (3, 3, &[&[0], &[1], &[2]]),
            (6, 3, &[&[0, 1], &[2, 3], &[4, 5]]),
            (7, 2, &[&[0, 1, 2, 3], &[4, 5, 6]]),
            (5, 4, &[&[0, 1], &[2], &[3], &[4]]),
            (4, 1, &[&[0, 1, 2, 3]]),
            (10, 4, &[&[0, 1, 2], &[3, 4, 5], &[6, 7], &[8, 9]]),
            (3, 5, &[&[0], &[1], &[2], &[], &[]]),
        ];
        for (n, k, want) in table {
            let consumers: Vec<String> = (1..=*k).map(|c| format!("c{c}")).collect();
            let got = all(&AllocateAveragely, &queues(*n), &consumers);
            let want: Vec<Vec<String>> = want
                .iter()
                .map(|ids| ids.iter().map(|i| format!("a{i}")).collect())
                .collect();
            assert_eq!(got, want, "{n} queues / {k} consumers");
        }
    }

    #[test]
    fn averagely_running_example() {
        let got = all(&AllocateAveragely, &eight(), &ids(&["c1", "c2", "c3"]));
        assert_eq!(
            got,
            [
                vec!["a0", "a1", "a2"],
                vec!["a3", "b0", "b1"],
                vec!["b2", "b3"]
            ]
        );
    }

    #[test]
    fn by_circle_table() {
        let got = all(
            &AllocateAveragelyByCircle,
            &eight(),
            &ids(&["c1", "c2", "c3"]),
        );
        assert_eq!(
            got,
            [
                vec!["a0", "a3", "b2"],
                vec!["a1", "b0", "b3"],
                vec!["a2", "b1"]
            ]
        );
        let table: &[(i32, usize, &[&[i32]])] = &[
            (2, 3, &[&[0], &[1], &[]]),
            (5, 2, &[&[0, 2, 4], &[1, 3]]),
            (4, 4, &[&[0], &[1], &[2], &[3]]),
            (7, 3, &[&[0, 3, 6], &[1, 4], &[2, 5]]),
        ];
        for (n, k, want) in table {
            let consumers: Vec<String> = (1..=*k).map(|c| format!("c{c}")).collect();
            let got = all(&AllocateAveragelyByCircle, &queues(*n), &consumers);
            let want: Vec<Vec<String>> = want
                .iter()
                .map(|ids| ids.iter().map(|i| format!("a{i}")).collect())
                .collect();
            assert_eq!(got, want, "{n} queues / {k} consumers");
        }
    }

    #[test]
    fn by_config_gives_everyone_the_list_without_checks() {
        let q = eight();
        let strategy = AllocateByConfig::new(vec![q[0].clone(), q[5].clone()]);
        let got = all(&strategy, &q, &ids(&["c1", "c2", "c3"]));
        assert_eq!(got, vec![vec!["a0", "b1"]; 3]);
        // No pre-check: empty inputs and strangers still get the list.
        assert_eq!(
            short(&strategy.allocate("G", "", &[], &[]).unwrap()),
            ["a0", "b1"]
        );
        assert!(AllocateByConfig::default()
            .allocate("G", "c1", &q, &ids(&["c1"]))
            .unwrap()
            .is_empty());
    }
}
