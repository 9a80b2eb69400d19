//! The request sequences recorded against the real Java 5.5.1 controller
//! (tests/vectors, captured by interop/java's ControllerVectorTest), replayed
//! through Waymark's decisions: every answer must be Java's — code, remark,
//! header (absent and `{}` told apart) and body — or one of the differences
//! docs/controller.md lists as deliberate, each named below with the answer
//! Waymark gives instead.
//!
//! Steps served by a node rather than by a decision (metadata, the
//! configuration requests) are left to the live differential test of
//! interop/java, which runs them against the binary; their effect on the
//! replay (`notifyBrokerRoleChanged`) is followed here.

use std::collections::BTreeMap;

use rmq_controller::core::decide::View;
use rmq_controller::core::notice::role_change_notice;
use rmq_controller::core::request::{self, Serving};
use rmq_controller::{Answer, LiveTable, Millis, Replicas};
use rmq_wire::{ExtFields, RemotingCommand, RequestCode};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
struct Vector {
    scenario: String,
    steps: Vec<Step>,
}

#[derive(Debug, Deserialize)]
struct Step {
    name: String,
    request: Option<Frame>,
    response: Option<Frame>,
    notify: Option<Notify>,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
struct Frame {
    code: i32,
    #[serde(rename = "extFields")]
    ext_fields: Option<BTreeMap<String, String>>,
    body: Option<String>,
    remark: Option<String>,
    flag: i32,
    version: i32,
}

#[derive(Debug, Deserialize)]
struct Notify {
    to: String,
    frame: Frame,
}

/// What Waymark answers where it decides differently from Java on purpose
/// (docs/controller.md, "Where Waymark decides differently"), step by step:
/// the difference itself and the steps whose answers follow from it.
struct Deliberate {
    scenario: &'static str,
    /// The step's name in the vector.
    step: &'static str,
    /// Which step of that name (1 = the first).
    occurrence: usize,
    /// Waymark's response code there.
    code: i32,
    /// Text Waymark's answer shows there (in its debug form).
    shows: &'static str,
    /// Why.
    why: &'static str,
}

const DELIBERATE: &[Deliberate] = &[
    Deliberate {
        scenario: "clean",
        step: "CLEAN ids 1;x",
        occurrence: 1,
        code: 2009,
        shows: r#"\"x\" is not a broker id"#,
        why: "the remark names the part that is not a number instead of quoting a Java exception",
    },
    Deliberate {
        scenario: "clean",
        step: "clean-d 1: CONTROLLER_ELECT_MASTER (broker trigger): first election",
        occurrence: 1,
        code: 2012,
        shows: r#"Failed to elect a new master"#,
        why: "clean-d 1 never heartbeated: a phantom cannot win a first election",
    },
    Deliberate {
        scenario: "clean",
        step: "clean-d 2: CONTROLLER_REGISTER_BROKER",
        occurrence: 1,
        code: 0,
        shows: r#"syncStateSet\":[]"#,
        why: "no master was elected (the phantom was refused)",
    },
    Deliberate {
        scenario: "clean",
        step: "CONTROLLER_GET_REPLICA_INFO [clean-d]: the set is gone",
        occurrence: 1,
        code: 0,
        shows: r#"syncStateSet\":[]"#,
        why: "cleaning 1 leaves the set whole (with 2), without a master; Java removed the SSS half of the set",
    },
    Deliberate {
        scenario: "clean",
        step: "clean-d 2: CONTROLLER_REGISTER_BROKER: the set is gone",
        occurrence: 1,
        code: 0,
        shows: r#"brokerName"#,
        why: "2 is still registered in the whole set",
    },
    Deliberate {
        scenario: "clean",
        step: "CONTROLLER_GET_SYNC_STATE_DATA [clean-d]: only 3, epochs 0",
        occurrence: 1,
        code: 0,
        shows: r#"brokerId\":2"#,
        why: "2 was never removed: the set has 2 and 3; Java lost 2",
    },
    Deliberate {
        scenario: "clean",
        step: "next: CONTROLLER_GET_NEXT_BROKER_ID",
        occurrence: 5,
        code: 0,
        shows: r#""nextBrokerId": "4""#,
        why: "ids are never handed out twice: the next is 4, where Java's rebuilt set offers 2 again",
    },
    Deliberate {
        scenario: "id_refusals",
        step: "next: CONTROLLER_GET_NEXT_BROKER_ID",
        occurrence: 1,
        code: 0,
        shows: r#""nextBrokerId": "6""#,
        why: "after 5 was applied out of order the next id is 6; Java offers 3, then 4 and 5 again",
    },
    Deliberate {
        scenario: "id_refusals",
        step: "4: APPLY_BROKER_ID 4",
        occurrence: 1,
        code: 2014,
        shows: r#"Fail to apply brokerId: 4"#,
        why: "4 is below the next id and was never applied: refused, so no id is handed out twice",
    },
    Deliberate {
        scenario: "id_refusals",
        step: "next: CONTROLLER_GET_NEXT_BROKER_ID offers 5, which 5 holds",
        occurrence: 1,
        code: 0,
        shows: r#""nextBrokerId": "6""#,
        why: "the next id is 6; Java offers 5, which 5 holds",
    },
    Deliberate {
        scenario: "id_refusals",
        step: "CONTROLLER_GET_SYNC_STATE_DATA [ids-a]: 1 is at its new address",
        occurrence: 1,
        code: 0,
        shows: r#"brokerId\":5"#,
        why: "4 was refused, so the set has 1, 2 and 5",
    },
    Deliberate {
        scenario: "other_refusals",
        step: "CONTROLLER_GET_SYNC_STATE_DATA without a body",
        occurrence: 1,
        code: 1,
        shows: r#"no broker names"#,
        why: "SYSTEM_ERROR as Java's, with a remark that names the missing list",
    },
    Deliberate {
        scenario: "other_refusals",
        step: "CONTROLLER_GET_SYNC_STATE_DATA []",
        occurrence: 1,
        code: 1,
        shows: r#"no broker names"#,
        why: "SYSTEM_ERROR as Java's, with a remark that names the missing list",
    },
    Deliberate {
        scenario: "other_refusals",
        step: "BROKER_HEARTBEAT (two-way) without clusterName: accepted",
        occurrence: 1,
        code: 2005,
        shows: r#"clusterName"#,
        why: "a heartbeat without clusterName could never keep a replica alive (liveness is keyed by cluster): refused, naming the field",
    },
    Deliberate {
        scenario: "phantom_election",
        step: "1: CONTROLLER_ELECT_MASTER (broker trigger): first election, 1 wins",
        occurrence: 1,
        code: 2012,
        shows: r#"Failed to elect a new master"#,
        why: "only a registered, alive replica wins a first election; 1 never heartbeated",
    },
    Deliberate {
        scenario: "phantom_election",
        step: "CONTROLLER_GET_REPLICA_INFO: master 1",
        occurrence: 1,
        code: 0,
        shows: r#""masterEpoch": "0""#,
        why: "no master was elected",
    },
    Deliberate {
        scenario: "phantom_election",
        step: "1: CONTROLLER_REGISTER_BROKER: the master is not alive, no master fields",
        occurrence: 1,
        code: 0,
        shows: r#"syncStateSet\":[]"#,
        why: "no master was elected, so the SSS is empty",
    },
    Deliberate {
        scenario: "phantom_election",
        step: "CONTROLLER_GET_SYNC_STATE_DATA [phantom-a]",
        occurrence: 1,
        code: 0,
        shows: r#"masterEpoch\":0"#,
        why: "no master was elected",
    },
    Deliberate {
        scenario: "phantom_election",
        step: "2: CONTROLLER_REGISTER_BROKER",
        occurrence: 1,
        code: 0,
        shows: r#"syncStateSet\":[]"#,
        why: "no master was elected, so the SSS is empty",
    },
    Deliberate {
        scenario: "phantom_election",
        step: "2: CONTROLLER_ELECT_MASTER (broker trigger) from outside the SSS",
        occurrence: 1,
        code: 0,
        shows: r#""masterBrokerId": "2""#,
        why: "the set never had a master: its first election goes to 2, the first registered, alive requester",
    },
    Deliberate {
        scenario: "phantom_election",
        step: "CONTROLLER_ELECT_MASTER as the controller triggers it (clusterName \"\", brokerId -1)",
        occurrence: 1,
        code: 2011,
        shows: r#"The old master 2 is still alive"#,
        why: "2 is the set's alive master",
    },
    Deliberate {
        scenario: "phantom_election",
        step: "CONTROLLER_GET_REPLICA_INFO: no master, master epoch 2, SSS kept",
        occurrence: 1,
        code: 0,
        shows: r#""masterBrokerId": "2""#,
        why: "2 is master at epoch 1",
    },
    Deliberate {
        scenario: "phantom_election",
        step: "2: CONTROLLER_ELECT_MASTER (broker trigger) again",
        occurrence: 1,
        code: 2011,
        shows: r#"The old master 2 is still alive"#,
        why: "2 is the set's alive master",
    },
    Deliberate {
        scenario: "phantom_election",
        step: "2: CONTROLLER_REGISTER_BROKER: no master",
        occurrence: 1,
        code: 0,
        shows: r#""masterBrokerId": "2""#,
        why: "2 is master",
    },
];

/// One replica's answers so far, replayed through the core the way a
/// leader node serves them.
struct Replay {
    replicas: Replicas,
    live: LiveTable,
    notify: bool,
    /// Notices sent and not yet matched with a recorded NOTIFY step.
    notices: Vec<(String, RemotingCommand)>,
}

impl Replay {
    fn new() -> Replay {
        Replay {
            replicas: Replicas::new(),
            live: LiveTable::new(),
            // The vectors' controller runs with notifyBrokerRoleChanged=false.
            notify: false,
            notices: Vec::new(),
        }
    }

    /// The answer to one request; `None` where a node (not a decision)
    /// answers.
    fn answer(&mut self, request: &RemotingCommand) -> Option<Answer> {
        let now = Millis(1_000);
        let code = request.request_code();
        match request::serving(code) {
            Serving::AnyNode if code == RequestCode::BrokerHeartbeat => {
                Some(request::heartbeat_answer(request::heartbeat(
                    &mut self.live,
                    &mut request.clone(),
                    Some(1),
                    now,
                )))
            }
            Serving::AnyNode => {
                if code == RequestCode::UpdateControllerConfig {
                    let body = String::from_utf8_lossy(request.body.as_deref().unwrap_or_default());
                    for line in body.lines() {
                        match line.trim() {
                            "notifyBrokerRoleChanged=true" => self.notify = true,
                            "notifyBrokerRoleChanged=false" => self.notify = false,
                            _ => {}
                        }
                    }
                }
                None
            }
            Serving::Leader => {
                let decision = request::decide(
                    View {
                        replicas: &self.replicas,
                        live: &self.live,
                        now,
                        elect_unclean: false,
                    },
                    request,
                );
                for event in &decision.events {
                    self.replicas.apply(event);
                }
                if self.notify && code == RequestCode::ControllerElectMaster {
                    if let Some((group, notice)) = role_change_notice(&decision.answer) {
                        for (id, addr) in &group.broker_addrs {
                            if self
                                .live
                                .is_alive(&group.cluster, &group.broker_name, *id, now)
                            {
                                self.notices.push((addr.clone(), notice.clone()));
                            }
                        }
                    }
                }
                Some(decision.answer)
            }
            Serving::Unsupported => Some(Answer::error(
                rmq_wire::ResponseCode::RequestCodeNotSupported,
                format!(" request type {} not supported", request.code),
            )),
        }
    }
}

fn command(frame: &Frame) -> RemotingCommand {
    let mut command = RemotingCommand::request(frame.code, 1);
    command.flag = frame.flag;
    command.version = frame.version;
    command.ext_fields = frame.ext_fields.as_ref().map(|ext| {
        ext.iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect::<ExtFields>()
    });
    command.body = frame.body.as_ref().map(|b| b.clone().into_bytes().into());
    command
}

/// The response frame Waymark sends for `answer` (what the transport puts
/// on the wire for a two-way request).
fn frame_of(answer: Answer, request: &RemotingCommand) -> Frame {
    let response = answer.into_response(request);
    Frame {
        code: response.code,
        ext_fields: response.ext_fields.map(|ext| ext.into_iter().collect()),
        body: response
            .body
            .map(|b| String::from_utf8(b.to_vec()).expect("controller bodies are text")),
        remark: response.remark,
        // The transport marks responses; Java's recorded frames say 1.
        flag: 1,
        version: response.version,
    }
}

fn notice_frame(notice: &RemotingCommand) -> Frame {
    Frame {
        code: notice.code,
        ext_fields: notice
            .ext_fields
            .clone()
            .map(|ext| ext.into_iter().collect()),
        body: notice
            .body
            .as_ref()
            .map(|b| String::from_utf8(b.to_vec()).unwrap()),
        remark: notice.remark.clone(),
        flag: notice.flag,
        version: notice.version,
    }
}

fn vectors(release: &str) -> Vec<Vector> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors");
    let mut all: Vec<Vector> = std::fs::read_dir(&dir)
        .expect("tests/vectors")
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|x| x == "json")
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.ends_with(&format!("_{release}.json")))
        })
        .map(|p| serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap())
        .collect();
    all.sort_by(|a, b| a.scenario.cmp(&b.scenario));
    all
}

#[test]
fn every_java_551_exchange_is_answered_as_java_does_or_as_documented() {
    replay_release("v551");
}

#[test]
fn every_java_533_exchange_is_answered_as_java_does_or_as_documented() {
    replay_release("v533");
}

fn replay_release(release: &str) {
    let all = vectors(release);
    assert!(
        all.len() >= 9,
        "expected the nine recorded scenarios, found {}",
        all.len()
    );
    let mut compared = 0;
    let mut deliberate_seen = 0;
    let mut problems = Vec::new();
    for vector in &all {
        let mut replay = Replay::new();
        for step in &vector.steps {
            if let Some(notify) = &step.notify {
                match replay.notices.iter().position(|(to, _)| *to == notify.to) {
                    Some(i) => {
                        let (_, notice) = replay.notices.remove(i);
                        if notice_frame(&notice) != notify.frame {
                            problems.push(format!(
                                "{} / {}: Java sent {:?}, Waymark sends {:?}",
                                vector.scenario,
                                step.name,
                                notify.frame,
                                notice_frame(&notice)
                            ));
                        }
                        compared += 1;
                    }
                    None => problems.push(format!(
                        "{} / {}: Java notified {}, Waymark does not",
                        vector.scenario, step.name, notify.to
                    )),
                }
                continue;
            }
            let (Some(request), Some(java)) = (&step.request, &step.response) else {
                continue;
            };
            let request = command(request);
            let Some(answer) = replay.answer(&request) else {
                continue;
            };
            let ours = frame_of(answer, &request);
            let occurrence = vector
                .steps
                .iter()
                .take_while(|s| !std::ptr::eq(*s, step))
                .filter(|s| s.name == step.name)
                .count()
                + 1;
            let deliberate = DELIBERATE.iter().find(|d| {
                d.scenario == vector.scenario && d.step == step.name && d.occurrence == occurrence
            });
            match deliberate {
                Some(d) => {
                    deliberate_seen += 1;
                    let shown = format!("{ours:?}");
                    if ours.code != d.code || !shown.contains(d.shows) || ours == *java {
                        problems.push(format!(
                            "{} / {} #{occurrence}: documented as code {} showing {:?} ({}), Waymark answers {shown}",
                            vector.scenario, step.name, d.code, d.shows, d.why
                        ));
                    }
                }
                None => {
                    compared += 1;
                    if ours != *java {
                        problems.push(format!(
                            "{} / {}:\n  Java    {java:?}\n  Waymark {ours:?}",
                            vector.scenario, step.name
                        ));
                    }
                }
            }
        }
        for (to, notice) in &replay.notices {
            problems.push(format!(
                "{}: Waymark notifies {to} ({:?}), Java did not",
                vector.scenario,
                notice_frame(notice)
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "{} of {compared} exchanges differ from Java ({release}):\n{}",
        problems.len(),
        problems.join("\n")
    );
    assert!(compared > 150, "only {compared} exchanges compared");
    assert_eq!(
        deliberate_seen,
        DELIBERATE.len(),
        "every documented difference names a recorded step"
    );
}
