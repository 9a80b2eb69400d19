//! Replication inside a broker set and the master's SSS (the Java broker's
//! `AutoSwitchHAService` and `ReplicasManager`'s SSS checks): every half
//! second a master takes writes and a slave pulls from
//! the master it believes in, truncating to what the two logs share and
//! copying a random stretch more (so slaves lag at times). A slave that has
//! everything the master has is caught up; the master adds it to the SSS at
//! once and, every 5 s, drops members that have not been caught up for
//! `haMaxTimeSlaveNotCatchup` or have stopped pulling, through
//! CONTROLLER_ALTER_SYNC_STATE_SET.

use std::collections::BTreeSet;

use rmq_controller::Answer;
use rmq_protocol::headers::AlterSyncStateSetRequestHeader;
use rmq_protocol::{Dialect, JavaJson, SyncStateSet};
use rmq_wire::RequestCode;

use super::log::Log;
use super::{Broker, Call, Phase, Role};
use crate::simulation::ctx::Ctx;
use crate::simulation::msg::{BrokerTimer, Msg};
use crate::simulation::net::Endpoint;

/// The HA loop period.
const HA_PERIOD: u64 = 500;
/// `haMaxTimeSlaveNotCatchup`.
const MAX_NOT_CAUGHT_UP: u64 = 15_000;
/// How far behind the master's end a slave still counts as caught up.
const CAUGHT_UP_SLACK: i64 = 400;
/// A slave that has not pulled for this long has no HA connection.
const HA_CONNECTION_TIMEOUT: u64 = 3_000;

impl Broker {
    /// Every half second: a master writes, a slave pulls.
    pub(super) fn ha_tick(&mut self, ctx: &mut Ctx) {
        match self.life.role {
            Role::Master => {
                let bytes = ctx.rng.i64(0..200);
                self.disk.log.write(bytes);
            }
            Role::Slave => {
                let master = self
                    .life
                    .master_addr
                    .as_ref()
                    .and_then(|a| ctx.addrs.get(a));
                if let (Some(master), Some(id)) = (master.copied(), self.life.id) {
                    let log = self.disk.log.clone();
                    ctx.send(self.me(), Endpoint::Broker(master), Msg::HaPull { id, log });
                }
            }
            Role::None => {}
        }
        ctx.broker_timer(self.index, self.inc, HA_PERIOD, BrokerTimer::Ha);
    }

    /// A slave pulled: answer with the log, and note whether it is caught
    /// up (holds nothing the master does not, and nearly all it does,
    /// including this epoch's start).
    pub(super) fn ha_pulled(&mut self, ctx: &mut Ctx, from: Endpoint, id: i64, log: Log) {
        if self.life.role != Role::Master {
            return;
        }
        let now = ctx.now();
        let own = &self.disk.log;
        let epoch_start = own.start_of(self.life.master_epoch).unwrap_or(0);
        // Java compares with the confirm offset, which trails the end by
        // what is in flight: here, up to one period's writes.
        let caught_up = own.common_prefix(&log) == log.end
            && log.end + CAUGHT_UP_SLACK >= own.end
            && log.end >= epoch_start;
        let seen = self.life.slaves.entry(id).or_default();
        seen.last_pull = now;
        if caught_up {
            seen.caught_up = now;
        }
        let push = Msg::HaPush {
            epoch: self.life.master_epoch,
            log: own.clone(),
        };
        ctx.send(self.me(), from, push);
        if caught_up && !self.life.sss.contains(&id) {
            let mut grown = self.life.sss.clone();
            grown.insert(id);
            self.alter(ctx, grown);
        }
    }

    /// The master's log arrived: follow it.
    pub(super) fn ha_pushed(&mut self, ctx: &mut Ctx, master: &Log) {
        if self.life.role != Role::Slave {
            return;
        }
        let chunk = ctx.rng.i64(0..3_000);
        self.disk.log.follow(master, chunk);
    }

    /// Every 5 s: the master's shrink check.
    pub(super) fn sss_check_tick(&mut self, ctx: &mut Ctx) {
        ctx.broker_timer(self.index, self.inc, 5_000, BrokerTimer::SssCheck);
        if self.life.role != Role::Master || self.life.phase != Phase::Running {
            return;
        }
        let Some(me) = self.life.id else { return };
        let now = ctx.now();
        let mut kept: BTreeSet<i64> = self
            .life
            .sss
            .iter()
            .copied()
            .filter(|id| {
                *id == me
                    || self.life.slaves.get(id).is_some_and(|s| {
                        now - s.caught_up <= MAX_NOT_CAUGHT_UP
                            && now - s.last_pull <= HA_CONNECTION_TIMEOUT
                    })
            })
            .collect();
        kept.insert(me);
        if kept != self.life.sss {
            self.alter(ctx, kept);
        }
    }

    /// Proposes `proposed` as the SSS, unless a proposal is under way.
    fn alter(&mut self, ctx: &mut Ctx, proposed: BTreeSet<i64>) {
        let pending = self
            .life
            .calls
            .values()
            .any(|c| matches!(c, Call::Alter { .. }));
        let Some(me) = self.life.id else { return };
        if pending || self.life.phase != Phase::Running {
            return;
        }
        let header = AlterSyncStateSetRequestHeader {
            broker_name: self.set.clone(),
            master_broker_id: me,
            master_epoch: self.life.master_epoch,
            invoke_time: 0,
        };
        let body = SyncStateSet {
            sync_state_set: proposed,
            sync_state_set_epoch: self.life.sss_epoch,
        };
        let cmd = Self::command(
            RequestCode::ControllerAlterSyncStateSet,
            &header,
            Some(body.to_json(Dialect::Default)),
        );
        let master_epoch = self.life.master_epoch;
        self.call(ctx, Call::Alter { master_epoch }, cmd);
    }

    /// ALTER_SYNC_STATE_SET answered: adopt the new set if this broker is
    /// still the master that asked.
    pub(super) fn alter_answered(&mut self, master_epoch: i32, answer: Answer) {
        if !answer.is_success()
            || self.life.role != Role::Master
            || self.life.master_epoch != master_epoch
        {
            return;
        }
        let body = answer
            .body
            .as_deref()
            .and_then(|b| SyncStateSet::from_json(b).ok())
            .expect("a successful alter answers the new set");
        if body.sync_state_set_epoch > self.life.sss_epoch {
            self.life.sss = body.sync_state_set;
            self.life.sss_epoch = body.sync_state_set_epoch;
        }
    }
}
