//! The oracle the registration tests hold the server's path to: a
//! registration written in one piece, the broker's part and every topic
//! under one hold of the table, as Java's `RouteInfoManager.registerBroker`
//! writes it under its write lock. `SharedRoutes::register_broker`, which
//! compares the topics first and writes them a slice at a time, must answer
//! what this answers and leave the table this leaves.

use super::super::{BrokerRegistration, Millis, RegisterError, RegisterOutcome, RouteTable};

/// REGISTER_BROKER in one piece, with the server path's arguments.
pub(super) fn register_in_one_piece(
    table: &mut RouteTable,
    mut reg: BrokerRegistration,
    now: Millis,
    notify_min_id: bool,
    delete_missing_topics: bool,
) -> Result<RegisterOutcome, RegisterError> {
    let (outcome, work) =
        table.begin_registration(&reg, now, notify_min_id, delete_missing_topics)?;
    if let Some(work) = work {
        let topics = std::mem::take(&mut reg.topic_configs);
        if work.applies() {
            table.reserve_topics(topics.len().saturating_sub(table.topic_count()));
        }
        table.apply_topics(&work, &topics);
        table.finish_topics(&work, &topics);
    }
    Ok(outcome)
}
