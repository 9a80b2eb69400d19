//! The turn: the waiting work taken one at a time, its read barrier, its
//! decision, its commit and its answer.

use rmq_protocol::headers::ElectMasterRequestHeader;
use rmq_wire::{RequestCode, ResponseCode};

use super::{
    not_leader, Action, Commit, Driver, Env, Stage, Ticket, Timer, Turn, Work, COMMIT_TIMEOUT_MS,
};
use crate::core::decide::{self, View};
use crate::core::request;
use crate::{Answer, Decision};

impl Driver {
    /// The read barrier asked for `ticket` passed (or, `passed` false,
    /// failed: this node may not lead, so the work is refused undecided).
    pub fn barrier_passed(
        &mut self,
        ticket: Ticket,
        passed: bool,
        env: &mut Env<'_>,
    ) -> Vec<Action> {
        let mut out = Vec::new();
        let Some(turn) = self
            .turn
            .take_if(|t| t.ticket == ticket && matches!(t.stage, Stage::Barrier))
        else {
            return out;
        };
        if passed {
            self.decide(ticket, turn.work, env, &mut out);
        } else {
            self.finish(ticket, turn.work, not_leader(), env, &mut out);
        }
        self.pump(env, &mut out);
        out
    }

    /// The entry proposed for `ticket` ended: the turn passes on, and the
    /// requester hears the decision's answer if the entry was applied
    /// (unless the commit timeout already answered it).
    pub fn committed(&mut self, ticket: Ticket, result: Commit, env: &mut Env<'_>) -> Vec<Action> {
        let mut out = Vec::new();
        let Some(turn) = self
            .turn
            .take_if(|t| t.ticket == ticket && matches!(t.stage, Stage::Commit { .. }))
        else {
            return out;
        };
        let Stage::Commit { answer, answered } = turn.stage else {
            unreachable!("taken only in the commit stage");
        };
        if !answered {
            let answer = match result {
                Commit::Applied => answer,
                Commit::NotLeader => not_leader(),
                Commit::Failed(error) => {
                    tracing::error!(%error, "a decision could not be committed");
                    Answer::error(
                        ResponseCode::SystemError,
                        format!("the decision could not be committed: {error}"),
                    )
                }
            };
            self.finish(ticket, turn.work, answer, env, &mut out);
        }
        self.pump(env, &mut out);
        out
    }

    /// A timer the driver asked for expired.
    pub fn timer_expired(&mut self, timer: Timer, env: &mut Env<'_>) -> Vec<Action> {
        let mut out = Vec::new();
        match timer {
            Timer::Turn(ticket) => {
                let Some(at) = self.waiting.iter().position(|(t, _)| *t == ticket) else {
                    return out;
                };
                let (_, work) = self.waiting.remove(at).expect("found above");
                let answer = Answer::error(
                    ResponseCode::SystemError,
                    "an earlier decision is still being committed; try again",
                );
                self.finish(ticket, work, answer, env, &mut out);
            }
            Timer::Commit(ticket) => {
                let Some(Turn {
                    work,
                    stage: Stage::Commit { answered, .. },
                    ..
                }) = self.turn.as_mut().filter(|t| t.ticket == ticket)
                else {
                    return out;
                };
                if *answered {
                    return out;
                }
                *answered = true;
                let work = work.clone();
                tracing::error!(
                    "a decision was not committed within {COMMIT_TIMEOUT_MS} ms; the next waits for it"
                );
                let answer = Answer::error(
                    ResponseCode::SystemError,
                    format!(
                        "the decision was not committed within {} s",
                        COMMIT_TIMEOUT_MS / 1_000
                    ),
                );
                self.finish(ticket, work, answer, env, &mut out);
            }
        }
        self.pump(env, &mut out);
        out
    }

    /// Takes waiting work while this node serves and nobody holds the turn.
    pub(super) fn pump(&mut self, env: &mut Env<'_>, out: &mut Vec<Action>) {
        while self.turn.is_none() && self.serving_since.is_some() {
            let Some((ticket, work)) = self.waiting.pop_front() else {
                return;
            };
            if env.settings.process_read_event {
                self.turn = Some(Turn {
                    ticket,
                    work,
                    stage: Stage::Barrier,
                });
                out.push(Action::ReadBarrier { ticket });
            } else {
                self.decide(ticket, work, env, out);
            }
        }
    }

    /// Decides `work` on the applied state; a decision with events holds
    /// the turn until its entry ends.
    fn decide(&mut self, ticket: Ticket, work: Work, env: &mut Env<'_>, out: &mut Vec<Action>) {
        let view = View {
            replicas: env.replicas,
            live: env.live,
            now: env.now,
            elect_unclean: env.settings.elect_unclean,
        };
        let Decision { answer, events } = match &work {
            Work::Request(command) => request::decide(view, command),
            Work::Elect { set, .. } => decide::elect_master(view, &controller_trigger(set)),
        };
        if events.is_empty() {
            self.finish(ticket, work, answer, env, out);
            return;
        }
        out.push(Action::Propose { ticket, events });
        out.push(Action::StartTimer {
            timer: Timer::Commit(ticket),
            after_ms: COMMIT_TIMEOUT_MS,
        });
        self.turn = Some(Turn {
            ticket,
            work,
            stage: Stage::Commit {
                answer,
                answered: false,
            },
        });
    }

    /// Work is done with `answer`: a request is answered (after a
    /// successful election the set's members are told first); the
    /// controller's own election notifies, gives up, or tries again.
    fn finish(
        &mut self,
        ticket: Ticket,
        work: Work,
        answer: Answer,
        env: &mut Env<'_>,
        out: &mut Vec<Action>,
    ) {
        match work {
            Work::Request(command) => {
                let code = command.request_code();
                if code == RequestCode::ControllerElectMaster && answer.is_success() {
                    // Java notifies after every successful election: a
                    // broker's own, an operator's and its own.
                    let broker = command.ext("brokerName");
                    let requested_by = command.ext("brokerId");
                    tracing::info!(?broker, ?requested_by, "new master elected");
                    self.notify(&answer, env, out);
                }
                out.push(Action::Answer { ticket, answer });
            }
            Work::Elect { set, attempt } => match answer.code {
                ResponseCode::Success => {
                    tracing::info!(broker = %set, attempt, "new master elected");
                    self.notify(&answer, env, out);
                }
                ResponseCode::ControllerMasterStillExist | ResponseCode::ControllerNotLeader => {}
                code => {
                    tracing::warn!(broker = %set, attempt, ?code, remark = ?answer.remark, "election failed");
                    if attempt < env.settings.elect_attempts && self.serving_since.is_some() {
                        let attempt = attempt + 1;
                        self.enqueue(Work::Elect { set, attempt }, out);
                    }
                }
            },
        }
    }
}

/// The controller's own CONTROLLER_ELECT_MASTER for `set`: no requester,
/// not designated.
fn controller_trigger(set: &str) -> ElectMasterRequestHeader {
    ElectMasterRequestHeader {
        cluster_name: Some(String::new()),
        broker_name: Some(set.to_owned()),
        broker_id: None,
        designate_elect: Some(false),
        invoke_time: None,
    }
}
