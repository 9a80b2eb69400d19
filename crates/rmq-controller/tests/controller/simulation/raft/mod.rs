//! A small Raft (the paper's Figure 2, without membership changes or
//! snapshots) standing in for openraft: terms, RequestVote with the
//! up-to-date check, AppendEntries with the consistency check and
//! truncation of conflicting suffixes, and commit only of entries of the
//! leader's own term once a majority holds them.
//!
//! It is sans-IO like the controller core: every handler returns the
//! messages to send and what the caller must do (reset the election timer,
//! start or stop leading). A leader numbers its rounds of AppendEntries, and
//! a round answered by a majority confirms that it still led when the round
//! was sent: the read barrier of `processReadEvent` (openraft's
//! `ensure_linearizable`). [`Durable`] is what survives a crash (term, vote,
//! log — written before any reply leaves, as a real store fsyncs); the rest,
//! including the commit index, is rebuilt after a restart.

use std::collections::BTreeSet;

use rmq_controller::Event;

mod receive;

/// A Raft term.
pub type Term = u64;
/// A log index; the first entry is 1.
pub type Index = u64;

/// What one log entry carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Payload {
    /// A new leader's first entry: committing it commits everything before.
    Noop,
    /// The events of one decision, applied together.
    Decision(Vec<Event>),
}

/// One log entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The term of the leader that appended it.
    pub term: Term,
    /// Its payload.
    pub payload: Payload,
}

/// What a node keeps across crashes.
#[derive(Debug, Clone, Default)]
pub struct Durable {
    /// The latest term it has seen.
    pub term: Term,
    /// Whom it voted for in `term`.
    pub voted_for: Option<usize>,
    /// The log; `log[0]` is index 1.
    pub log: Vec<Entry>,
}

/// A Raft message between nodes.
#[derive(Debug, Clone)]
pub enum Message {
    /// RequestVote.
    Vote {
        term: Term,
        last_index: Index,
        last_term: Term,
    },
    /// RequestVote's answer.
    VoteReply { term: Term, granted: bool },
    /// AppendEntries (empty: a heartbeat), of the leader's round `round`.
    Append {
        term: Term,
        prev_index: Index,
        prev_term: Term,
        entries: Vec<Entry>,
        commit: Index,
        round: u64,
    },
    /// AppendEntries' answer: on success the index the follower now matches
    /// up to; on failure a hint where to look for the match. `round` is the
    /// request's.
    AppendReply {
        term: Term,
        success: bool,
        index: Index,
        round: u64,
    },
}

/// A node's role in its current term.
#[derive(Debug, Clone)]
pub enum Role {
    /// Follows whoever leads the term.
    Follower,
    /// Asks for votes; holds the ones granted.
    Candidate { votes: BTreeSet<usize> },
    /// Leads: what to send each follower next, how far each matches, the
    /// last round sent, and the last round each follower answered.
    Leader {
        next: Vec<Index>,
        matched: Vec<Index>,
        round: u64,
        answered: Vec<u64>,
    },
}

/// What a handler asks of its caller.
#[derive(Debug, Default)]
pub struct Output {
    /// Messages to send, `(to, message)`.
    pub send: Vec<(usize, Message)>,
    /// Restart the election timer (a leader was heard from or a vote cast).
    pub reset_timer: bool,
    /// This node has just become leader of its term.
    pub became_leader: bool,
    /// This node has just stopped leading.
    pub stepped_down: bool,
}

/// Entries per AppendEntries.
const BATCH: usize = 32;

/// One node's Raft state.
#[derive(Debug, Clone)]
pub struct Raft {
    /// This node.
    pub id: usize,
    /// The group size.
    pub size: usize,
    /// Survives crashes.
    pub durable: Durable,
    /// Volatile from here on.
    pub role: Role,
    /// The highest index known committed.
    pub commit: Index,
    /// The leader of the current term, when known.
    pub leader: Option<usize>,
    /// Refuse votes to candidates with a less up-to-date log (always, but
    /// for a deliberate flaw).
    pub check_log: bool,
}

impl Raft {
    /// A node (re)starting from its durable state, as a follower that knows
    /// nothing committed.
    pub fn new(id: usize, size: usize, durable: Durable) -> Raft {
        Raft {
            id,
            size,
            durable,
            role: Role::Follower,
            commit: 0,
            leader: None,
            check_log: true,
        }
    }

    /// The index of the last entry (0 when empty).
    pub fn last_index(&self) -> Index {
        self.durable.log.len() as Index
    }

    /// The term of entry `index` (0 for index 0 or past the end).
    pub fn term_at(&self, index: Index) -> Term {
        self.entry(index).map_or(0, |e| e.term)
    }

    /// Entry `index`.
    pub fn entry(&self, index: Index) -> Option<&Entry> {
        let i = usize::try_from(index).ok()?.checked_sub(1)?;
        self.durable.log.get(i)
    }

    /// Whether this node leads its term.
    pub fn is_leader(&self) -> bool {
        matches!(self.role, Role::Leader { .. })
    }

    pub(super) fn majority(&self) -> usize {
        self.size / 2 + 1
    }

    fn peers(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.size).filter(move |p| *p != self.id)
    }

    /// The election timer fired: stand as candidate in a new term.
    pub fn timeout(&mut self, out: &mut Output) {
        if self.is_leader() {
            return;
        }
        self.durable.term += 1;
        self.durable.voted_for = Some(self.id);
        self.role = Role::Candidate {
            votes: BTreeSet::from([self.id]),
        };
        self.leader = None;
        out.reset_timer = true;
        let (term, last_index) = (self.durable.term, self.last_index());
        let last_term = self.term_at(last_index);
        for peer in self.peers().collect::<Vec<_>>() {
            out.send.push((
                peer,
                Message::Vote {
                    term,
                    last_index,
                    last_term,
                },
            ));
        }
    }

    /// Adopts a newer term (or, at the same term, gives up candidacy).
    pub(super) fn follow(&mut self, term: Term, out: &mut Output) {
        if term > self.durable.term {
            self.durable.term = term;
            self.durable.voted_for = None;
            self.leader = None;
        }
        if self.is_leader() {
            out.stepped_down = true;
        }
        self.role = Role::Follower;
    }

    /// Appends `payload` as leader; its index. Sent with the next tick.
    pub fn propose(&mut self, payload: Payload) -> Index {
        assert!(self.is_leader(), "only a leader proposes");
        self.durable.log.push(Entry {
            term: self.durable.term,
            payload,
        });
        let last = self.last_index();
        if let Role::Leader { matched, .. } = &mut self.role {
            matched[self.id] = last;
        }
        self.advance_commit();
        last
    }

    /// The leader's heartbeat: a new round of AppendEntries to every
    /// follower.
    pub fn tick(&mut self, out: &mut Output) {
        let Role::Leader { next, round, .. } = &mut self.role else {
            return;
        };
        *round += 1;
        let (next, round) = (next.clone(), *round);
        for peer in self.peers().collect::<Vec<_>>() {
            let prev_index = next[peer] - 1;
            let from = usize::try_from(prev_index).expect("small log");
            let to = (from + BATCH).min(self.durable.log.len());
            out.send.push((
                peer,
                Message::Append {
                    term: self.durable.term,
                    prev_index,
                    prev_term: self.term_at(prev_index),
                    entries: self.durable.log[from..to].to_vec(),
                    commit: self.commit,
                    round,
                },
            ));
        }
    }

    /// Wins the election: every follower is sent the log from its end on,
    /// and the term starts with a no-op entry.
    pub(super) fn lead(&mut self, out: &mut Output) {
        let last = self.last_index();
        self.role = Role::Leader {
            next: vec![last + 1; self.size],
            matched: vec![0; self.size],
            round: 0,
            answered: vec![0; self.size],
        };
        self.leader = Some(self.id);
        out.became_leader = true;
        self.propose(Payload::Noop);
        self.tick(out);
    }

    /// As leader: the round a read barrier asked for now waits for (the
    /// next one sent).
    pub fn next_round(&self) -> Option<u64> {
        match &self.role {
            Role::Leader { round, .. } => Some(round + 1),
            _ => None,
        }
    }

    /// As leader: the latest round a majority (this node included) has
    /// answered in the current term.
    pub fn confirmed_round(&self) -> Option<u64> {
        let Role::Leader {
            round, answered, ..
        } = &self.role
        else {
            return None;
        };
        let mut rounds: Vec<u64> = self.peers().map(|p| answered[p]).chain([*round]).collect();
        rounds.sort_unstable_by(|a, b| b.cmp(a));
        Some(rounds[self.majority() - 1])
    }

    /// Commits the highest entry of the current term a majority holds.
    pub(super) fn advance_commit(&mut self) {
        let Role::Leader { matched, .. } = &self.role else {
            return;
        };
        let term = self.durable.term;
        for index in (self.commit + 1..=self.last_index()).rev() {
            if self.term_at(index) != term {
                // Entries of earlier terms commit only under one of ours.
                break;
            }
            let holders = matched.iter().filter(|m| **m >= index).count();
            if holders >= self.majority() {
                self.commit = index;
                break;
            }
        }
    }
}
