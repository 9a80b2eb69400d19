//! From the signing and TLS flags, and the environment, to the
//! [`ConnectOptions`] every connection is made with, plus the notes and
//! warnings the operator sees on stderr before anything is sent.
//!
//! Signing, first that applies:
//! 1. `--tools-yml PATH`: the file must give `accessKey` and `secretKey`;
//!    anything else is a usage error naming the file (mqadmin would send
//!    unsigned requests without a word, which no one who named a file wants);
//! 2. `--access-key`/`--secret-key`, each defaulting to
//!    `ROCKETMQ_ACCESS_KEY`/`ROCKETMQ_SECRET_KEY` (so the secret can stay off
//!    the command line); one without the other is a usage error;
//! 3. `$ROCKETMQ_HOME/conf/tools.yml` if it exists, as mqadmin reads it
//!    (`MQAdminStartup` passes `AclUtils.getAclRPCHook` of that file to every
//!    sub-command), with a note saying so; if it cannot be used, a
//!    warning and unsigned requests, as mqadmin.
//!
//! TLS: `--tls` is Java's `tls.enable=true`; the other TLS flags become the
//! `tls.client.*` keys and `tls.config.file`, read by
//! [`TlsSettings::from_properties_with`] as the servers read theirs, except
//! that Java's default `/etc/rocketmq/tls.properties` is not read: values
//! there would win over the flags on the command line. A
//! TLS flag without `--tls` is a usage error rather than ignored, as is TLS
//! with no way to check the server (neither a trust file nor
//! `--tls-insecure`).
//!
//! Usage errors are clap errors: `.exit()` prints them and exits with 2.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::error::ErrorKind;
use clap::CommandFactory;
use rmq_auth::Credentials;
use rmq_transport::tls::{TlsClient, TlsSettings};

use crate::cli::{Cli, SecurityArgs};
use crate::namesrv::ConnectOptions;

/// The access key's environment variable.
pub const ACCESS_KEY_ENV: &str = "ROCKETMQ_ACCESS_KEY";
/// The secret key's environment variable.
pub const SECRET_KEY_ENV: &str = "ROCKETMQ_SECRET_KEY";
/// Where mqadmin looks for `conf/tools.yml`.
pub const HOME_ENV: &str = "ROCKETMQ_HOME";

/// The Java key `--tls-insecure` sets; its warning is replaced by one that
/// names the flag.
const AUTH_SERVER_KEY: &str = "tls.client.authServer";

/// The options `cli` asks for, and the lines to print on stderr (notes and
/// warnings, each one line). `env` reads an environment variable (the
/// process's in the binary; a map in tests).
///
/// # Errors
/// A clap usage error, as described in the module documentation.
pub fn connect_options(
    cli: &Cli,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(ConnectOptions, Vec<String>), clap::Error> {
    let mut messages = Vec::new();
    let credentials = credentials(&cli.security, env, &mut messages)?;
    let tls = tls(&cli.security, &mut messages)?;
    let options = ConnectOptions {
        timeout: Duration::from_millis(cli.timeout_ms),
        tls,
        credentials,
    };
    Ok((options, messages))
}

fn usage(kind: ErrorKind, message: impl std::fmt::Display) -> clap::Error {
    Cli::command().error(kind, message)
}

fn credentials(
    args: &SecurityArgs,
    env: &dyn Fn(&str) -> Option<String>,
    messages: &mut Vec<String>,
) -> Result<Option<Credentials>, clap::Error> {
    if let Some(file) = &args.tools_yml {
        if args.access_key.is_some() || args.secret_key.is_some() {
            return Err(usage(
                ErrorKind::ArgumentConflict,
                "--tools-yml and --access-key/--secret-key both say what to sign with: give one",
            ));
        }
        return Credentials::from_tools_yml(file)
            .map(Some)
            .map_err(|error| usage(ErrorKind::InvalidValue, format!("--tools-yml: {error}")));
    }
    let given = |flag: &Option<String>, var: &str| {
        flag.clone()
            .or_else(|| env(var))
            .filter(|value| !value.is_empty())
    };
    let access_key = given(&args.access_key, ACCESS_KEY_ENV);
    let secret_key = given(&args.secret_key, SECRET_KEY_ENV);
    match (access_key, secret_key) {
        (Some(access_key), Some(secret_key)) => {
            Ok(Some(Credentials::new(access_key, secret_key)))
        }
        (Some(_), None) => Err(usage(
            ErrorKind::MissingRequiredArgument,
            format!(
                "an access key needs its secret key: set {SECRET_KEY_ENV} (or give --secret-key, which other users of the machine can see)"
            ),
        )),
        (None, Some(_)) => Err(usage(
            ErrorKind::MissingRequiredArgument,
            format!("a secret key needs its access key: give --access-key or set {ACCESS_KEY_ENV}"),
        )),
        (None, None) => Ok(implicit_tools_yml(env, messages)),
    }
}

/// mqadmin's own source of credentials: `$ROCKETMQ_HOME/conf/tools.yml`.
fn implicit_tools_yml(
    env: &dyn Fn(&str) -> Option<String>,
    messages: &mut Vec<String>,
) -> Option<Credentials> {
    let home = env(HOME_ENV).filter(|home| !home.trim().is_empty())?;
    let file: PathBuf = Path::new(&home).join("conf").join("tools.yml");
    if !file.exists() {
        return None;
    }
    match Credentials::from_tools_yml(&file) {
        Ok(credentials) => {
            messages.push(format!(
                "note: signing requests as {} with {} (${HOME_ENV}/conf/tools.yml, as mqadmin does; --access-key or --tools-yml override it)",
                credentials.access_key,
                file.display()
            ));
            Some(credentials)
        }
        Err(error) => {
            messages.push(format!(
                "warning: ${HOME_ENV}/conf/tools.yml not used, requests go unsigned (as mqadmin sends them): {error}"
            ));
            None
        }
    }
}

fn tls(args: &SecurityArgs, messages: &mut Vec<String>) -> Result<Option<TlsClient>, clap::Error> {
    let tls_flags = [
        ("--tls-trust", args.tls_trust.is_some()),
        ("--tls-cert", args.tls_cert.is_some()),
        ("--tls-key", args.tls_key.is_some()),
        ("--tls-insecure", args.tls_insecure),
        ("--tls-config-file", args.tls_config_file.is_some()),
    ];
    if !args.tls {
        if let Some((flag, _)) = tls_flags.iter().find(|(_, given)| *given) {
            return Err(usage(
                ErrorKind::MissingRequiredArgument,
                format!("{flag} needs --tls, which switches TLS on for every connection (Java's tls.enable)"),
            ));
        }
        return Ok(None);
    }
    if args.tls_trust.is_some() && args.tls_insecure {
        return Err(usage(
            ErrorKind::ArgumentConflict,
            "--tls-trust verifies the servers' certificates, --tls-insecure accepts any: give one",
        ));
    }
    match (&args.tls_cert, &args.tls_key) {
        (Some(_), None) => {
            return Err(usage(
                ErrorKind::MissingRequiredArgument,
                "--tls-cert needs --tls-key, the certificate's private key",
            ))
        }
        (None, Some(_)) => {
            return Err(usage(
                ErrorKind::MissingRequiredArgument,
                "--tls-key needs --tls-cert, the certificate it belongs to",
            ))
        }
        _ => {}
    }

    let mut properties = BTreeMap::new();
    let mut set = |key: &str, value: String| properties.insert(key.to_owned(), value);
    let text = |path: &Path| path.to_string_lossy().into_owned();
    set("tls.enable", "true".into());
    if let Some(trust) = &args.tls_trust {
        set("tls.client.trustCertPath", text(trust));
        set(AUTH_SERVER_KEY, "true".into());
    }
    if args.tls_insecure {
        set(AUTH_SERVER_KEY, "false".into());
    }
    if let (Some(cert), Some(key)) = (&args.tls_cert, &args.tls_key) {
        set("tls.client.certPath", text(cert));
        set("tls.client.keyPath", text(key));
    }
    if let Some(file) = &args.tls_config_file {
        set("tls.config.file", text(file));
    }
    let tls_error = |error| usage(ErrorKind::InvalidValue, format!("TLS: {error}"));
    // Only a file the operator names: Java's default /etc/rocketmq/tls.properties
    // would silently win over the flags given on this command line.
    let settings = TlsSettings::from_properties_with(&properties, None).map_err(tls_error)?;
    if settings.client.trust_cert_path.is_none() && settings.client.auth_server != Some(false) {
        return Err(usage(
            ErrorKind::MissingRequiredArgument,
            "--tls needs to know how to check the servers' certificates: \
             --tls-trust CA.pem verifies that they chain to that CA (not the host name, as Java), \
             --tls-insecure accepts any certificate (Java's default; anyone who can intercept \
             the connection can then pose as the server)",
        ));
    }
    let (client, warnings) = TlsClient::from_settings(&settings).map_err(tls_error)?;
    for warning in settings.warnings.iter().chain(&warnings) {
        if args.tls_insecure && warning.key == AUTH_SERVER_KEY {
            continue;
        }
        messages.push(format!("warning: TLS {warning}"));
    }
    if args.tls_insecure && !client.verifies_server() {
        messages.push(
            "warning: --tls-insecure: server certificates are not verified; anyone who can \
             intercept a connection can pose as the NameServer or controller and read what \
             is sent"
                .to_owned(),
        );
    }
    Ok(Some(client))
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use clap::Parser;

    use super::*;

    fn resolve(
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Result<(ConnectOptions, Vec<String>), clap::Error> {
        let mut all = vec!["rmq-admin", "-n", "127.0.0.1:9876"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["cluster", "list"]);
        let cli = Cli::try_parse_from(all).unwrap();
        let env: HashMap<String, String> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        connect_options(&cli, &|name| env.get(name).cloned())
    }

    struct Dir(PathBuf);

    impl Dir {
        fn new(name: &str) -> Dir {
            let dir = std::env::temp_dir()
                .join(format!("rmq-admin-security-{name}-{}", std::process::id()));
            std::fs::create_dir_all(dir.join("conf")).unwrap();
            Dir(dir)
        }

        fn write(&self, name: &str, text: &str) -> String {
            let path = self.0.join(name);
            std::fs::write(&path, text).unwrap();
            path.display().to_string()
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn keys_come_from_flags_or_the_environment() {
        let (options, messages) = resolve(&[], &[]).unwrap();
        assert!(options.credentials.is_none() && options.tls.is_none());
        assert!(messages.is_empty());

        let (options, _) = resolve(
            &["--access-key", "ops-admin"],
            &[(SECRET_KEY_ENV, "ops-secret-1")],
        )
        .unwrap();
        assert_eq!(
            options.credentials,
            Some(Credentials::new("ops-admin", "ops-secret-1"))
        );
        let (options, _) = resolve(
            &[],
            &[(ACCESS_KEY_ENV, "env-key"), (SECRET_KEY_ENV, "env-secret")],
        )
        .unwrap();
        assert_eq!(options.credentials.unwrap().access_key, "env-key");

        let half = resolve(&["--access-key", "ops-admin"], &[]).unwrap_err();
        assert_eq!(half.kind(), ErrorKind::MissingRequiredArgument);
        assert!(half.to_string().contains(SECRET_KEY_ENV), "{half}");
        let half = resolve(&[], &[(SECRET_KEY_ENV, "s")]).unwrap_err();
        assert!(half.to_string().contains("--access-key"), "{half}");
    }

    #[test]
    fn an_explicit_tools_yml_must_work() {
        let dir = Dir::new("explicit");
        let good = dir.write(
            "good.yml",
            "accessKey: ops-admin\nsecretKey: ops-secret-1\n",
        );
        let (options, messages) = resolve(&["--tools-yml", &good], &[]).unwrap();
        assert_eq!(options.credentials.unwrap().access_key, "ops-admin");
        assert!(messages.is_empty(), "{messages:?}");

        let bad = dir.write("bad.yml", "accessKey: ops-admin\n");
        let error = resolve(&["--tools-yml", &bad], &[]).unwrap_err();
        assert_eq!(error.exit_code(), 2);
        assert!(
            error.to_string().contains(&bad) && error.to_string().contains("secretKey"),
            "{error}"
        );
        let missing = format!("{}/none.yml", dir.0.display());
        let error = resolve(&["--tools-yml", &missing], &[]).unwrap_err();
        assert!(error.to_string().contains(&missing), "{error}");
        let both = resolve(&["--tools-yml", &good, "--access-key", "x"], &[]).unwrap_err();
        assert_eq!(both.kind(), ErrorKind::ArgumentConflict);
        // The environment is a default, not a conflict.
        let (options, _) =
            resolve(&["--tools-yml", &good], &[(ACCESS_KEY_ENV, "env-key")]).unwrap();
        assert_eq!(options.credentials.unwrap().access_key, "ops-admin");
    }

    #[test]
    fn rocketmq_home_tools_yml_is_used_as_mqadmin_does() {
        let dir = Dir::new("home");
        let home = dir.0.display().to_string();
        dir.write(
            "conf/tools.yml",
            "accessKey: rocketmq2\nsecretKey: 12345678\n",
        );
        let (options, messages) = resolve(&[], &[(HOME_ENV, &home)]).unwrap();
        assert_eq!(options.credentials.unwrap().access_key, "rocketmq2");
        assert_eq!(messages.len(), 1);
        assert!(
            messages[0].starts_with("note: ") && messages[0].contains("conf/tools.yml"),
            "{messages:?}"
        );
        let (options, messages) = resolve(
            &["--access-key", "ops-admin", "--secret-key", "ops-secret-1"],
            &[(HOME_ENV, &home)],
        )
        .unwrap();
        assert_eq!(options.credentials.unwrap().access_key, "ops-admin");
        assert!(messages.is_empty());

        dir.write("conf/tools.yml", "accessKey: [broken\n");
        let (options, messages) = resolve(&[], &[(HOME_ENV, &home)]).unwrap();
        assert!(options.credentials.is_none());
        assert!(
            messages[0].starts_with("warning: ") && messages[0].contains("unsigned"),
            "{messages:?}"
        );
    }

    #[test]
    fn tls_flags_need_tls_and_a_way_to_check_the_server() {
        let error = resolve(&["--tls"], &[]).unwrap_err();
        assert_eq!(error.exit_code(), 2);
        let text = error.to_string();
        assert!(
            text.contains("--tls-trust") && text.contains("--tls-insecure"),
            "{text}"
        );
        let error = resolve(&["--tls-trust", "/ca.pem"], &[]).unwrap_err();
        assert!(error.to_string().contains("needs --tls"), "{error}");
        let error =
            resolve(&["--tls", "--tls-trust", "/ca.pem", "--tls-insecure"], &[]).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::ArgumentConflict);
        let error = resolve(&["--tls", "--tls-insecure", "--tls-cert", "/c.pem"], &[]).unwrap_err();
        assert!(error.to_string().contains("--tls-key"), "{error}");

        let (options, messages) = resolve(&["--tls", "--tls-insecure"], &[]).unwrap();
        assert!(!options.tls.unwrap().verifies_server());
        assert_eq!(messages.len(), 1, "{messages:?}");
        assert!(messages[0].contains("--tls-insecure"), "{messages:?}");

        let error = resolve(&["--tls", "--tls-trust", "/nonexistent/ca.pem"], &[]).unwrap_err();
        assert!(error.to_string().contains("/nonexistent/ca.pem"), "{error}");
    }

    #[test]
    fn the_tls_config_file_can_say_how_to_check() {
        let dir = Dir::new("tls-file");
        let file = dir.write("tls.properties", "tls.client.authServer=false\n");
        let (options, messages) = resolve(&["--tls", "--tls-config-file", &file], &[]).unwrap();
        assert!(!options.tls.unwrap().verifies_server());
        assert!(
            messages.iter().any(|m| m.contains("tls.client.authServer")),
            "{messages:?}"
        );
    }
}
