//! A large registration applied in slices (`SharedRoutes::register_broker`)
//! leaves the table the one-piece oracle leaves, and a registration
//! overtaken between slices writes no more of its topics.

use rmq_protocol::TopicConfig;

use super::oracle::register_in_one_piece;
use super::{broker, contents, Edit};
use crate::route::{RouteTable, SharedRoutes};

fn topics(prefix: &str, count: usize) -> Vec<TopicConfig> {
    (0..count)
        .map(|n| TopicConfig {
            read_queue_nums: 4,
            write_queue_nums: 4,
            ..TopicConfig::new(format!("{prefix}-{n:05}"))
        })
        .collect()
}

#[test]
fn sliced_and_whole_registrations_leave_the_same_table() {
    let first = topics("T", 5_500);
    let mut second = topics("T", 4_200);
    second.extend(topics("U", 3_000));
    for delete_missing in [false, true] {
        let shared = SharedRoutes::new();
        let mut whole = RouteTable::new();
        let steps = [
            broker("c", "broker-a", "a:1", 0).topics(&first),
            broker("c", "broker-a", "a:1", 0)
                .topics(&second)
                .version(2, 0),
            broker("c", "broker-a", "a:2", 1)
                .topics(&second)
                .version(2, 0),
        ];
        for (at, step) in steps.into_iter().enumerate() {
            let now = 1_000 + at as u64;
            let sliced = shared
                .register_broker(step.clone(), now, true, delete_missing)
                .unwrap();
            let one_piece =
                register_in_one_piece(&mut whole, step, now, true, delete_missing).unwrap();
            assert_eq!(sliced, one_piece, "step {at}");
            assert_eq!(
                contents(&shared.read()),
                contents(&whole),
                "step {at}, delete_missing {delete_missing}"
            );
        }
        let left = shared.read().all_topics().len();
        assert_eq!(left, if delete_missing { 7_200 } else { 8_500 });
    }
}

#[test]
fn a_registration_overtaken_between_slices_writes_no_more_topics() {
    let routes = SharedRoutes::new();
    let old = broker("c", "broker-a", "a:1", 0).topics(&topics("Old", 10));
    let (_, old_work) = routes
        .write()
        .begin_registration(&old, 1_000, false, false)
        .unwrap();
    let old_work = old_work.expect("work to do");
    routes
        .write()
        .apply_topics(&old_work, &old.topic_configs[..5]);
    assert!(old_work.is_current(&routes.read()));

    let new = broker("c", "broker-a", "a:1", 0)
        .topics(&topics("New", 3))
        .version(2, 0);
    routes.register_broker(new, 1_001, false, false).unwrap();
    assert!(!old_work.is_current(&routes.read()));
    routes
        .write()
        .apply_topics(&old_work, &old.topic_configs[5..]);

    let expected: Vec<String> = (0..5)
        .map(|n| format!("New-{n:05}"))
        .filter(|t| t.as_str() < "New-00003")
        .chain((0..5).map(|n| format!("Old-{n:05}")))
        .collect();
    assert_eq!(routes.read().all_topics(), expected);
}
