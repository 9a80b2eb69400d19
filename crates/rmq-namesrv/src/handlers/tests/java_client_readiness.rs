//! Java `ClusterTestRequestProcessorTest`'s readiness cases (the first check of
//! `ClientRequestProcessor.getRouteInfoByTopic`): `needWaitForService` refuses
//! route queries for the first `waitSecondsForService` seconds after start.
//! Time is tokio's, paused.

use std::time::Duration;

use rmq_wire::{RequestCode as C, ResponseCode as R};

use super::*;

fn route_request() -> RemotingCommand {
    request(C::GetRouteInfoByTopic, &[("topic", "unit-test")])
}

fn ready_code(f: &Fixture) -> R {
    let mut response = f.call(&route_request());
    if code(&response) == R::SystemError {
        assert_eq!(
            response.remark.take().as_deref(),
            Some("name server not ready")
        );
    }
    code(&response)
}

fn fixture(need_wait: bool, seconds: i32) -> Fixture {
    Fixture::with(|c| {
        c.need_wait_for_service = need_wait;
        c.wait_seconds_for_service = seconds;
    })
}

#[tokio::test(start_paused = true)]
async fn wait_zero_seconds_is_ready_at_once() {
    // The topic is unknown, so "ready" shows as TOPIC_NOT_EXIST.
    assert_eq!(ready_code(&fixture(true, 0)), R::TopicNotExist);
}

#[tokio::test(start_paused = true)]
async fn no_wait_is_ready_at_once() {
    assert_eq!(ready_code(&fixture(false, 45)), R::TopicNotExist);
}

#[tokio::test(start_paused = true)]
async fn waiting_45_seconds_is_not_ready_just_after_start() {
    assert_eq!(ready_code(&fixture(true, 45)), R::SystemError);
}

#[tokio::test(start_paused = true)]
async fn waiting_3_seconds_is_ready_after_4() {
    let f = fixture(true, 3);
    assert_eq!(ready_code(&f), R::SystemError);
    tokio::time::advance(Duration::from_secs(4)).await;
    assert_eq!(ready_code(&f), R::TopicNotExist);
}

#[tokio::test(start_paused = true)]
async fn readiness_is_checked_before_the_header() {
    let f = fixture(true, 45);
    let response = f.call(&request(C::GetRouteInfoByTopic, &[]));
    assert_eq!(code(&response), R::SystemError);
    // Other requests are never held back.
    assert_eq!(
        code(&f.call(&request(C::GetBrokerClusterInfo, &[]))),
        R::Success
    );
}
