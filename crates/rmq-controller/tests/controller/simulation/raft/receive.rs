//! What a node does with each Raft message: RequestVote and its answer,
//! AppendEntries (the consistency check, truncation of a conflicting
//! suffix, the follower's commit index) and its answer (the leader's
//! bookkeeping of what each follower holds).

use super::{Entry, Index, Message, Output, Raft, Role, Term};

/// The fields of an AppendEntries request.
struct Append {
    term: Term,
    prev_index: Index,
    prev_term: Term,
    entries: Vec<Entry>,
    commit: Index,
}

impl Raft {
    /// Handles a message from `from`.
    pub fn receive(&mut self, from: usize, message: Message, out: &mut Output) {
        match message {
            Message::Vote {
                term,
                last_index,
                last_term,
            } => {
                if term > self.durable.term {
                    self.follow(term, out);
                }
                let (my_index, my_term) = (self.last_index(), self.term_at(self.last_index()));
                let up_to_date = !self.check_log
                    || last_term > my_term
                    || (last_term == my_term && last_index >= my_index);
                let granted = term == self.durable.term
                    && up_to_date
                    && self.durable.voted_for.is_none_or(|v| v == from);
                if granted {
                    self.durable.voted_for = Some(from);
                    out.reset_timer = true;
                }
                let term = self.durable.term;
                out.send.push((from, Message::VoteReply { term, granted }));
            }
            Message::VoteReply { term, granted } => {
                if term > self.durable.term {
                    self.follow(term, out);
                    return;
                }
                let majority = self.majority();
                let Role::Candidate { votes } = &mut self.role else {
                    return;
                };
                if term == self.durable.term && granted {
                    votes.insert(from);
                    if votes.len() >= majority {
                        self.lead(out);
                    }
                }
            }
            Message::Append {
                term,
                prev_index,
                prev_term,
                entries,
                commit,
                round,
            } => {
                let append = Append {
                    term,
                    prev_index,
                    prev_term,
                    entries,
                    commit,
                };
                self.append(from, append, round, out)
            }
            Message::AppendReply {
                term,
                success,
                index,
                round,
            } => {
                if term > self.durable.term {
                    self.follow(term, out);
                    return;
                }
                let Role::Leader {
                    next,
                    matched,
                    answered,
                    ..
                } = &mut self.role
                else {
                    return;
                };
                if term != self.durable.term {
                    return;
                }
                // Any answer of this term, even a refusal, shows the
                // follower still takes this node for its leader.
                answered[from] = answered[from].max(round);
                if success {
                    matched[from] = matched[from].max(index);
                    next[from] = next[from].max(index + 1);
                } else {
                    // Never below what the follower is known to match: a
                    // late refusal must not undo a later success.
                    next[from] = (index + 1).min(next[from]).max(matched[from] + 1);
                }
                self.advance_commit();
            }
        }
    }

    /// AppendEntries from the leader of `term`, of its round `round`.
    fn append(&mut self, from: usize, append: Append, round: u64, out: &mut Output) {
        let Append {
            term,
            prev_index,
            prev_term,
            entries,
            commit,
        } = append;
        if term < self.durable.term {
            let term = self.durable.term;
            out.send.push((
                from,
                Message::AppendReply {
                    term,
                    success: false,
                    index: 0,
                    round,
                },
            ));
            return;
        }
        self.follow(term, out);
        self.leader = Some(from);
        out.reset_timer = true;
        if prev_index > self.last_index() || self.term_at(prev_index) != prev_term {
            let hint = if prev_index > self.last_index() {
                self.last_index()
            } else {
                prev_index - 1
            };
            out.send.push((
                from,
                Message::AppendReply {
                    term,
                    success: false,
                    index: hint,
                    round,
                },
            ));
            return;
        }
        let count = entries.len() as Index;
        for (k, entry) in entries.into_iter().enumerate() {
            let index = prev_index + 1 + k as Index;
            if index <= self.last_index() {
                if self.term_at(index) == entry.term {
                    // Already there: a late duplicate must not truncate
                    // what a newer message appended behind it.
                    continue;
                }
                assert!(
                    index > self.commit,
                    "n{} would truncate committed entry {index}",
                    self.id
                );
                self.durable
                    .log
                    .truncate(usize::try_from(index - 1).unwrap());
            }
            self.durable.log.push(entry);
        }
        let matched = prev_index + count;
        self.commit = self.commit.max(commit.min(matched));
        out.send.push((
            from,
            Message::AppendReply {
                term,
                success: true,
                index: matched,
                round,
            },
        ));
    }
}
