# Waymark NameServer image: a small, non-root runtime with a health check.
#
#   docker build -t waymark/namesrv .
#   docker run -d -p 9876:9876 -p 127.0.0.1:9877:9877 -v waymark-data:/var/lib/waymark waymark/namesrv
#
# The image also holds rmq-controller and rmq-admin
# (docker run --entrypoint rmq-controller ... -c /etc/waymark/controller.properties).
# Its entrypoint, deploy/docker/entrypoint.sh, starts the NameServer as above,
# arguments appended; given rocketmq-operator's controller variables
# (controllerDLegerGroup, controllerDLegerPeers, MY_POD_NAME, controllerStorePath)
# it starts rmq-controller instead. docs/deployment.md has the details.

FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
# The same build CI checks (packaging/check.sh). Without .git in the build
# context the revision comes from this argument.
ARG WAYMARK_GIT_REVISION=unknown
ENV WAYMARK_GIT_REVISION=${WAYMARK_GIT_REVISION}
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    packaging/build-binaries.sh /out

FROM debian:bookworm-slim
# A fixed uid/gid, so that volumes keep their owner across image versions.
RUN groupadd --system --gid 10001 waymark \
 && useradd --system --uid 10001 --gid waymark --home-dir /var/lib/waymark --shell /usr/sbin/nologin waymark \
 && mkdir -p /var/lib/waymark /etc/waymark \
 && chown waymark:waymark /var/lib/waymark /etc/waymark \
 && chmod 0711 /root
# chmod: rocketmq-operator mounts its pods' volumes under /root (/root/logs,
# /root/store), which the image's user must be able to pass through.
COPY --from=build /out/bin/rmq-namesrv /out/bin/rmq-controller /out/bin/rmq-admin /usr/local/bin/
COPY --chmod=0755 deploy/docker/entrypoint.sh /usr/local/bin/waymark-entrypoint
# The example configuration with the HTTP port open to the container's
# network, so that probes and scrapers reach it through the published port.
COPY --chown=waymark:waymark conf/namesrv.properties conf/controller.properties /etc/waymark/
RUN sed -i 's|^#httpListenAddr=127.0.0.1:9877$|httpListenAddr=0.0.0.0:9877|' /etc/waymark/namesrv.properties \
 && grep -q '^httpListenAddr=0.0.0.0:9877$' /etc/waymark/namesrv.properties
USER waymark
ENV HOME=/var/lib/waymark
WORKDIR /var/lib/waymark
VOLUME ["/var/lib/waymark"]
EXPOSE 9876 9877
# No curl in the slim image: bash's /dev/tcp speaks enough HTTP for GET /health.
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/9877 && printf 'GET /health HTTP/1.0\\r\\n\\r\\n' >&3 && read -r status <&3 && [[ $status == *' 200 '* ]]"]
# Without controller variables: rmq-namesrv -c /etc/waymark/namesrv.properties "$@".
ENTRYPOINT ["waymark-entrypoint"]
