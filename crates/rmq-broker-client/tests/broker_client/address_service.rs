//! The NameServer list fetched from an HTTP address service (Java's
//! `fetchNameServerAddr`), switching servers without restart.

use std::sync::Arc;
use std::time::Duration;

use crate::common::{eventually, master, route, Namesrv};
use rmq_broker_client::{
    numbered_topics, wall_ms, AddressService, Event, NameServerList, Registrar, Schedule,
    TopicTable,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::watch;

/// A one-route HTTP server answering every GET with the current text.
async fn address_server(text: watch::Receiver<String>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let body = text.borrow().clone();
            tokio::spawn(async move {
                let mut request = vec![0; 4096];
                let n = socket.read(&mut request).await.unwrap_or(0);
                let head = String::from_utf8_lossy(&request[..n]);
                assert!(
                    head.starts_with("GET /rocketmq/nsaddr HTTP/1.1\r\n"),
                    "{head}"
                );
                assert!(head.contains("Client-Version: V5_3_3\r\n"), "{head}");
                let response = format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(response.as_bytes()).await;
            });
        }
    });
    addr
}

#[tokio::test]
async fn switching_the_served_list_moves_the_registration() {
    let [first, second] = Namesrv::start_many(&[]);
    let (set_text, text) = watch::channel(format!("{}\n", first.addr));
    let server = address_server(text).await;
    let service = AddressService::java(&server, "nsaddr").unwrap();

    let config = master("broker-h", 46911);
    let topics = TopicTable::with_topics(numbered_topics("http-t", 2, 4), wall_ms());
    let registrar = Arc::new(Registrar::new(config, topics, NameServerList::empty()).unwrap());
    let schedule = Schedule {
        first_register_delay: Duration::from_millis(200),
        register_period: Duration::from_millis(200),
        fetch_interval: Duration::from_millis(100),
        ..Schedule::java(registrar.config(), Some(service))
    };
    let (tx, mut events) = tokio::sync::mpsc::unbounded_channel();
    let running = rmq_broker_client::spawn(registrar.clone(), schedule, Some(tx));

    // The list is fetched before the start-up registration.
    match events.recv().await.unwrap() {
        Event::NameServersChanged { addrs } => assert_eq!(addrs, [first.addr.as_str()]),
        other => panic!("{other:?}"),
    }
    match events.recv().await.unwrap() {
        Event::Registered { report, .. } => assert!(report.is_success(), "{report:?}"),
        other => panic!("{other:?}"),
    }
    assert!(route(&first.addr, "http-t0").await.is_some());
    assert!(route(&second.addr, "http-t0").await.is_none());

    set_text
        .send(format!("{}\r\nignored", second.addr))
        .unwrap();
    let addr = second.addr.clone();
    let moved = eventually(Duration::from_secs(3), || {
        let addr = addr.clone();
        async move { route(&addr, "http-t0").await.is_some() }
    })
    .await;
    assert!(moved);
    assert_eq!(registrar.namesrv().addrs(), [second.addr.as_str()]);
    drop(running);
}
