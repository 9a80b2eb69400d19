//! The request driver ([`crate::core::driver`]) run over openraft and
//! tokio: each input is fed to the driver under its lock, with the applied
//! state, this node's liveness table, the clock and the configuration lent
//! for the step; the actions it returns are carried out after the lock is
//! released — answers handed to the waiting requests, proposals written
//! through Raft, read barriers passed, timers slept, notices sent — and
//! each outcome is fed back as the next input.

use std::sync::{Arc, Weak};
use std::time::Duration;

use openraft::error::{ClientWriteError, RaftError};
use rmq_wire::{RemotingCommand, ResponseCode};

use super::raft::Command;
use super::{tasks, ControllerNode};
use crate::core::driver::{Action, Commit, Driver, Env, Settings, Ticket};
use crate::{Answer, Millis};

impl ControllerNode {
    /// When this node became a serving leader; `None` while it is not one.
    pub fn serving_since(&self) -> Option<Millis> {
        self.driver().serving_since()
    }

    fn driver(&self) -> std::sync::MutexGuard<'_, Driver> {
        self.driver.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The configuration the driver reads, as it is now.
    fn settings(&self) -> Settings {
        let config = self.config();
        Settings {
            process_read_event: config.process_read_event,
            elect_unclean: config.enable_elect_unclean_master,
            elect_attempts: u32::try_from(config.elect_master_max_retry_count)
                .unwrap_or(0)
                .max(1),
            notify_role_changed: config.notify_broker_role_changed,
        }
    }

    /// Runs `input` on the driver with everything it reads lent to it. The
    /// locks are taken in one order everywhere: driver, applied state,
    /// liveness table.
    fn with_driver<R>(&self, input: impl FnOnce(&mut Driver, &mut Env<'_>) -> R) -> R {
        let settings = self.settings();
        let now = self.now();
        let mut driver = self.driver();
        let applied = self.applied();
        let mut live = self.live();
        let mut env = Env {
            replicas: &applied.replicas,
            live: &mut live,
            now,
            settings,
        };
        input(&mut driver, &mut env)
    }

    /// Feeds the driver one input and carries out what it asks.
    pub(crate) fn step(
        self: &Arc<Self>,
        input: impl FnOnce(&mut Driver, &mut Env<'_>) -> Vec<Action>,
    ) {
        let actions = self.with_driver(input);
        self.execute(actions);
    }

    /// A leader-only request, decided in its turn and committed; its
    /// answer once the decision's entry is applied (see the driver for
    /// every other answer it can get). SYSTEM_BUSY when
    /// `controllerRequestThreadPoolQueueCapacity` requests already wait.
    pub async fn serve_leader_request(self: &Arc<Self>, request: RemotingCommand) -> Answer {
        let Ok(_admitted) = self.admitted.clone().try_acquire_owned() else {
            self.metrics
                .refusals
                .refused(super::metrics::refusal::REQUEST_QUEUE_FULL);
            return Answer::error(
                ResponseCode::SystemBusy,
                "[OVERLOAD]system busy, start flow control for a while",
            );
        };
        let (answered, answer) = tokio::sync::oneshot::channel();
        let actions = self.with_driver(|driver, env| {
            let (ticket, actions) = driver.request(request, env);
            self.waiting().insert(ticket, answered);
            actions
        });
        self.execute(actions);
        answer.await.unwrap_or_else(|_| {
            Answer::error(
                ResponseCode::SystemError,
                "the controller stopped before the decision was answered",
            )
        })
    }

    fn waiting(
        &self,
    ) -> std::sync::MutexGuard<
        '_,
        std::collections::HashMap<Ticket, tokio::sync::oneshot::Sender<Answer>>,
    > {
        self.waiting.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Carries out the driver's actions, in order.
    fn execute(self: &Arc<Self>, actions: Vec<Action>) {
        for action in actions {
            match action {
                Action::Answer { ticket, answer } => {
                    if let Some(requester) = self.waiting().remove(&ticket) {
                        // A requester that went away (its connection closed)
                        // is not told.
                        let _ = requester.send(answer);
                    }
                }
                Action::Propose { ticket, events } => {
                    let node = self.clone();
                    tokio::spawn(async move {
                        let raft = node.raft.clone();
                        // In a task of its own, so that even a panic inside
                        // Raft comes back as a result and frees the turn.
                        let write =
                            tokio::spawn(
                                async move { raft.client_write(Command { events }).await },
                            );
                        let result = match write.await {
                            Ok(Ok(_)) => Commit::Applied,
                            Ok(Err(RaftError::APIError(ClientWriteError::ForwardToLeader(_)))) => {
                                Commit::NotLeader
                            }
                            Ok(Err(error)) => Commit::Failed(error.to_string()),
                            Err(panicked) => Commit::Failed(panicked.to_string()),
                        };
                        node.step(|driver, env| driver.committed(ticket, result, env));
                    });
                }
                Action::ReadBarrier { ticket } => {
                    let node = self.clone();
                    tokio::spawn(async move {
                        let passed = match node.raft.ensure_linearizable().await {
                            Ok(_) => true,
                            Err(error) => {
                                tracing::debug!(%error, "read barrier failed");
                                false
                            }
                        };
                        node.step(|driver, env| driver.barrier_passed(ticket, passed, env));
                    });
                }
                Action::StartTimer { timer, after_ms } => {
                    // A timer does not keep a stopped node alive.
                    let node: Weak<ControllerNode> = Arc::downgrade(self);
                    tokio::spawn(async move {
                        tokio::time::sleep(Duration::from_millis(after_ms)).await;
                        if let Some(node) = node.upgrade() {
                            node.step(|driver, env| driver.timer_expired(timer, env));
                        }
                    });
                }
                Action::Notify { brokers, notice } => tasks::notify(self, brokers, notice),
            }
        }
    }
}
