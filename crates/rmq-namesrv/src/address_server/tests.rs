use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::*;

fn member(liveness: Liveness, ready: bool, remoting: Option<&str>) -> MemberView<'_> {
    MemberView {
        liveness,
        ready,
        remoting,
    }
}

#[test]
fn only_live_ready_members_with_an_address_are_listed_once_each() {
    let members = [
        member(Liveness::Live, true, Some("10.0.0.3:9876")),
        member(Liveness::Live, false, Some("10.0.0.4:9876")),
        member(Liveness::Dead, true, Some("10.0.0.5:9876")),
        member(Liveness::Unknown, true, Some("10.0.0.6:9876")),
        member(Liveness::Live, true, None),
        // The same node restarted: its old incarnation dead, its new one live.
        member(Liveness::Dead, true, Some("10.0.0.2:9876")),
        member(Liveness::Live, true, Some("10.0.0.2:9876")),
    ];
    assert_eq!(
        ready_members(Some("10.0.0.1:9876"), members.into_iter()),
        ["10.0.0.1:9876", "10.0.0.2:9876", "10.0.0.3:9876"]
    );
    assert_eq!(
        ready_members(None, members.into_iter()),
        ["10.0.0.2:9876", "10.0.0.3:9876"],
        "this node is left out while it is not ready"
    );
    assert!(ready_members(None, std::iter::empty()).is_empty());
}

#[test]
fn the_source_follows_the_keys() {
    let bound: SocketAddr = "127.0.0.1:9876".parse().unwrap();
    let wildcard: SocketAddr = "0.0.0.0:9876".parse().unwrap();
    let configured = AddressServer::new(" nsaddr ", " 10.0.0.1:9876 ; ns2:9876", None, bound);
    assert_eq!(configured.path(), "/rocketmq/nsaddr");
    assert_eq!(configured.addresses(), ["10.0.0.1:9876", "ns2:9876"]);
    assert_eq!(configured.warning(""), None);
    let alone = AddressServer::new("nsaddr", "  ", None, bound);
    assert_eq!(alone.addresses(), ["127.0.0.1:9876"]);
    let nowhere = AddressServer::new("nsaddr", "", None, wildcard);
    assert!(nowhere.addresses().is_empty());
    assert!(nowhere.warning("").unwrap().contains("503"));
}

#[test]
fn the_keys_are_checked() {
    for good in ["nsaddr", "ns-addr_2.unit~x", " nsaddr "] {
        assert_eq!(
            check_subgroup("addressServerSubgroup", good),
            Ok(()),
            "{good}"
        );
    }
    for bad in [
        "", " ", "a/b", "ns addr", "ns?x", "ns%41", "{x}", ".", "..", "nsäddr",
    ] {
        let error = check_subgroup("addressServerSubgroup", bad).unwrap_err();
        assert!(error.contains("addressServerSubgroup"), "{error}");
    }
    for good in [
        "",
        "127.0.0.1:9876",
        "10.0.0.1:9876;10.0.0.2:9876",
        " ns1.example:9876 ; ns2.example:9876 ",
    ] {
        assert_eq!(check_list("addressServerList", good), Ok(()), "{good}");
    }
    for bad in [
        "127.0.0.1",
        "127.0.0.1:0",
        "127.0.0.1:65536",
        "127.0.0.1:x",
        ":9876",
        "a:1;;b:2",
        "a:1;",
        "a b:1",
    ] {
        let error = check_list("addressServerList", bad).unwrap_err();
        assert!(error.contains("addressServerList"), "{error}");
    }
}

/// `GET path` over HTTP/1.0 to `addr`: the status, the headers and the body.
async fn get(addr: SocketAddr, path: &str) -> (u16, String, String) {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!("GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.unwrap();
    let text = String::from_utf8(response).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, head.to_ascii_lowercase(), body.to_owned())
}

/// The address server's router with the HTTP port's fallback, served on a
/// port the kernel picks.
async fn serve(server: AddressServer) -> SocketAddr {
    let router = server
        .router::<()>()
        .fallback(|| async { rmq_ops::http::ApiError::not_found("no such page") });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    addr
}

#[tokio::test]
async fn the_list_is_the_whole_body_and_other_paths_are_not_found() {
    let bound: SocketAddr = "127.0.0.1:9876".parse().unwrap();
    let server = AddressServer::new("unit-a", "10.0.0.1:9876;10.0.0.2:9876", None, bound);
    let addr = serve(server).await;
    let (status, head, body) = get(addr, "/rocketmq/unit-a").await;
    assert_eq!(status, 200);
    assert!(head.contains("content-type: text/plain"), "{head}");
    assert_eq!(
        body, "10.0.0.1:9876;10.0.0.2:9876",
        "nothing around the list"
    );
    // Java's DefaultTopAddressing with a unitName adds a query; the path decides.
    assert_eq!(get(addr, "/rocketmq/unit-a?nofix=1").await.0, 200);
    for path in [
        "/rocketmq/nsaddr",
        "/rocketmq/",
        "/rocketmq",
        "/rocketmq//unit-a",
        "/rocketmq/unit-a/",
        "/rocketmq/unit-a/x",
        "/rocketmq/unit-a-other",
        "/rocketmq/unit%2Da",
        "/rocketmq/%ff",
        "/rocketmq/../rocketmq/unit-a/..",
        "/ROCKETMQ/unit-a",
    ] {
        let (status, _, body) = get(addr, path).await;
        assert_eq!(status, 404, "{path}: {body}");
    }
}

#[tokio::test]
async fn nothing_to_list_is_unavailable() {
    let wildcard: SocketAddr = "0.0.0.0:9876".parse().unwrap();
    let addr = serve(AddressServer::new(DEFAULT_SUBGROUP, "", None, wildcard)).await;
    let (status, _, _) = get(addr, "/rocketmq/nsaddr").await;
    assert_eq!(status, 503);
}
