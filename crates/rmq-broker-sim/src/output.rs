//! The output lines of controller mode: one per id, role change,
//! sync-state-set change and start failure of a replica, each with a
//! timestamp, plus the registration lines of the fleet's format.

use std::sync::Arc;

use rmq_broker_client::controller::IdOrigin;
use rmq_broker_client::{AgentEvent, Event, Registrar, ReplicaRole, RoleChange};
use tokio::sync::mpsc::UnboundedReceiver;

use crate::{line, print_report, stamp, trigger_name};

pub fn role_name(role: &ReplicaRole) -> &'static str {
    match role {
        ReplicaRole::Unknown => "unknown",
        ReplicaRole::Master => "master",
        ReplicaRole::Slave { .. } => "slave",
    }
}

fn origin_name(origin: IdOrigin) -> &'static str {
    match origin {
        IdOrigin::File => "file",
        IdOrigin::Reapplied => "reapplied",
        IdOrigin::Assigned => "assigned",
    }
}

/// The one-line form of a role change.
fn role_line(label: &str, addr: &str, change: &RoleChange) -> String {
    let mut text = format!(
        "role time={} replica={label} addr={addr} id={} from={} to={} epoch={} source={}",
        stamp::now(),
        change.controller_id,
        role_name(&change.from),
        role_name(&change.to),
        change.master_epoch,
        change.source
    );
    if let ReplicaRole::Slave {
        master_id,
        master_addr,
    } = &change.to
    {
        text.push_str(&format!(" master={master_id}@{master_addr}"));
    }
    text
}

/// Prints what one replica's agent and schedule report, until both stop.
pub async fn print_events(
    label: String,
    registrar: Arc<Registrar>,
    mut agent: UnboundedReceiver<AgentEvent>,
    mut schedule: UnboundedReceiver<Event>,
) {
    let addr = registrar.config().broker_addr.clone();
    let (mut agent_open, mut schedule_open) = (true, true);
    while agent_open || schedule_open {
        tokio::select! {
            event = agent.recv(), if agent_open => match event {
                None => agent_open = false,
                Some(AgentEvent::IdObtained { controller_id, origin }) => line(&format!(
                    "id time={} replica={label} addr={addr} id={controller_id} origin={}",
                    stamp::now(),
                    origin_name(origin)
                )),
                Some(AgentEvent::RoleChanged(change)) => line(&role_line(&label, &addr, &change)),
                Some(AgentEvent::SyncStateSetChanged(set)) => line(&format!(
                    "sss time={} replica={label} set={} epoch={}",
                    stamp::now(),
                    set.sync_state_set.iter().map(i64::to_string).collect::<Vec<_>>().join(","),
                    set.sync_state_set_epoch
                )),
                Some(AgentEvent::Registered(report)) => print_report(&registrar, "role-change", &report),
                Some(AgentEvent::Running) => {}
                Some(AgentEvent::StartFailed(error)) => line(&format!(
                    "start-failed time={} replica={label} error=\"{error}\"",
                    stamp::now()
                )),
            },
            event = schedule.recv(), if schedule_open => match event {
                None => schedule_open = false,
                Some(Event::Registered { trigger, report }) => {
                    print_report(&registrar, trigger_name(trigger), &report);
                }
                Some(_) => {}
            },
        }
    }
}
