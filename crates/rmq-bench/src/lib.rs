//! `rmq-bench`: one harness that runs the same NameServer (and controller)
//! workloads against several servers in the same run and reports their
//! ratios.
//!
//! Owns load generation ([`load`]: many pipelined [`rmq_transport::RpcClient`]
//! connections, closed-loop or fixed-rate, HdrHistogram latencies, a progress
//! line), the workloads ([`workload`]: broker fleets and their registration
//! bodies, built with `rmq-broker-client`), the peers it starts and stops
//! ([`peer`]: Waymark, the Java NameServer, the `rocketmq-namesrv` Rust port
//! and the in-process [`ceiling`] server; [`group`]: three-node controller
//! groups of Waymark's and of the Java controller), CPU pinning and CPU
//! accounting ([`pin`]; server CPU per request in [`cpu`]), the scenarios
//! ([`scenario`]), and the results, report and charts ([`results`],
//! [`report`], [`charts`]), with what a run was measured from and the rule
//! that keeps a dirty tree or a disturbed machine out of the docs
//! ([`provenance`]).
//!
//! It does not own any NameServer or controller behaviour: correctness is
//! the business of each server's own tests. Performance is measured here and
//! never asserted.

pub mod ceiling;
pub mod charts;
pub mod cli;
pub mod compare;
pub mod cpu;
pub mod group;
pub mod load;
pub mod peer;
pub mod pin;
pub mod provenance;
pub mod report;
pub mod results;
pub mod scenario;
pub mod stats;
pub mod workload;
