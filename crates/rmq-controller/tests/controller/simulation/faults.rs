//! The fault schedule: between `faults_from` and `faults_until` a new
//! fault every few seconds, drawn from the seed — node crashes (the leader
//! more often than its share), partitions (some isolating the leader, with
//! or without brokers), one-way link cuts, bursts of loss and delay, broker
//! crashes (some coming back at another address) and pauses, and jumps of
//! a node's local clock either way. Each fault schedules its own end; at
//! `faults_until` everything heals at once (clock jumps stay: a clock does
//! not jump back by itself).

use std::collections::BTreeMap;

use crate::simulation::broker::Process;
use crate::simulation::msg::Happening;
use crate::simulation::net::Endpoint;
use crate::simulation::world::World;

/// A step of the fault schedule.
#[derive(Debug, Clone)]
pub enum Fault {
    /// Draw and inject the next fault.
    Next,
    /// Start node `i` again (if it is down).
    RestartNode(usize),
    /// End partition number `gen` (if it is still the current one).
    EndPartition(u64),
    /// Mend a one-way cut.
    Mend(Endpoint, Endpoint),
    /// End loss/delay burst number `gen`.
    EndNoise(u64),
    /// Start broker `i` (if it is down).
    RestartBroker(usize),
    /// Resume broker `i` (if it is paused).
    ResumeBroker(usize),
    /// Every fault ends.
    HealAll,
}

impl World {
    /// Handles one step of the schedule.
    pub fn fault(&mut self, fault: Fault) {
        match fault {
            Fault::Next => {
                if self.ctx.faulty() {
                    self.inject();
                    let after = self.ctx.rng.u64(1_000..6_000);
                    self.later(after, Fault::Next);
                }
            }
            Fault::RestartNode(i) => {
                if !self.nodes[i].up {
                    self.nodes[i].start(&mut self.ctx);
                }
            }
            Fault::EndPartition(gen) => {
                if gen == self.partition_gen {
                    self.ctx.net.end_partition();
                }
            }
            Fault::Mend(from, to) => self.ctx.net.mend(from, to),
            Fault::EndNoise(gen) => {
                if gen == self.noise_gen {
                    let net = &mut self.ctx.net;
                    (net.loss, net.spike, net.spike_max) = (0.0, 0.0, 0);
                }
            }
            Fault::RestartBroker(i) => {
                if matches!(self.brokers[i].process, Process::Down) {
                    self.brokers[i].start(&mut self.ctx);
                }
            }
            Fault::ResumeBroker(i) => self.brokers[i].resume(&mut self.ctx),
            Fault::HealAll => {
                self.ctx.net.heal();
                self.partition_gen += 1;
                self.noise_gen += 1;
                for i in 0..self.nodes.len() {
                    self.fault(Fault::RestartNode(i));
                }
                for i in 0..self.brokers.len() {
                    self.fault(Fault::ResumeBroker(i));
                    self.fault(Fault::RestartBroker(i));
                }
            }
        }
    }

    fn later(&mut self, after: u64, fault: Fault) {
        self.ctx.queue.after(after, Happening::Fault(fault));
    }

    /// A node drawn at random.
    fn some_node(&mut self) -> usize {
        self.ctx.rng.usize(0..self.nodes.len())
    }

    fn inject(&mut self) {
        let rng = &mut self.ctx.rng;
        let kind = rng.u8(0..100);
        let leader = self.leader();
        match kind {
            0..=14 => {
                // The leader in a third of the cases, if there is one.
                let victim = match leader {
                    Some(l) if self.ctx.rng.u8(0..3) == 0 => l,
                    _ => self.some_node(),
                };
                if self.nodes[victim].up {
                    self.nodes[victim].crash();
                    self.ctx.note(format!("crash n{victim}"));
                    let after = self.ctx.rng.u64(500..20_000);
                    self.later(after, Fault::RestartNode(victim));
                }
            }
            15..=34 => self.partition(leader),
            35..=44 => {
                let from = self.some_endpoint();
                let to = self.some_endpoint();
                self.ctx.net.cut(from, to);
                self.ctx.note(format!("cut {from} -> {to}"));
                let after = self.ctx.rng.u64(1_000..15_000);
                self.later(after, Fault::Mend(from, to));
            }
            45..=59 => {
                self.noise_gen += 1;
                let rng = &mut self.ctx.rng;
                let net = &mut self.ctx.net;
                net.loss = rng.f64() * 0.3;
                net.spike = rng.f64() * 0.2;
                net.spike_max = rng.u64(100..3_000);
                let after = rng.u64(1_000..20_000);
                self.later(after, Fault::EndNoise(self.noise_gen));
                let line = self.ctx.net.describe();
                self.ctx.note(line);
            }
            60..=74 => {
                let b = self.ctx.rng.usize(0..self.brokers.len());
                if matches!(self.brokers[b].process, Process::Down) {
                    return;
                }
                self.brokers[b].crash(&mut self.ctx);
                self.ctx.note(format!("crash b{b}"));
                if self.ctx.rng.u8(0..4) == 0 {
                    self.brokers[b].relocate(&mut self.ctx);
                    let addr = self.brokers[b].addr.clone();
                    self.ctx.note(format!("b{b} will come back at {addr}"));
                }
                let after = self.ctx.rng.u64(500..20_000);
                self.later(after, Fault::RestartBroker(b));
            }
            75..=86 => {
                let b = self.ctx.rng.usize(0..self.brokers.len());
                if self.broker_running(b) {
                    self.brokers[b].process = Process::Paused(Vec::new());
                    self.ctx.note(format!("pause b{b}"));
                    let after = self.ctx.rng.u64(500..15_000);
                    self.later(after, Fault::ResumeBroker(b));
                }
            }
            _ => {
                let n = self.some_node();
                let rng = &mut self.ctx.rng;
                let jump = rng.i64(500..20_000) * if rng.bool() { 1 } else { -1 };
                self.nodes[n].clock_jump += jump;
                self.ctx.note(format!("n{n} clock jumps {jump} ms"));
            }
        }
    }

    /// A two-way split: half the time (when there is a leader) the leader
    /// alone, otherwise nodes at random; brokers go either way.
    fn partition(&mut self, leader: Option<usize>) {
        self.partition_gen += 1;
        let mut sides = BTreeMap::new();
        let rng = &mut self.ctx.rng;
        match leader {
            Some(l) if rng.bool() => {
                sides.insert(Endpoint::Node(l), 1);
            }
            _ => {
                for n in 0..self.nodes.len() {
                    if rng.bool() {
                        sides.insert(Endpoint::Node(n), 1);
                    }
                }
            }
        }
        for b in 0..self.brokers.len() {
            if rng.u8(0..3) == 0 {
                sides.insert(Endpoint::Broker(b), 1);
            }
        }
        self.ctx.net.partition(sides);
        let line = self.ctx.net.describe();
        self.ctx.note(line);
        let after = self.ctx.rng.u64(1_000..20_000);
        self.later(after, Fault::EndPartition(self.partition_gen));
    }

    fn some_endpoint(&mut self) -> Endpoint {
        let nodes = self.nodes.len();
        let i = self.ctx.rng.usize(0..nodes + self.brokers.len());
        if i < nodes {
            Endpoint::Node(i)
        } else {
            Endpoint::Broker(i - nodes)
        }
    }
}
