//! Reading the `tls.*` keys: modes, the config file, warnings, versions
//! and suites.

use super::*;

fn props(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn parse(pairs: &[(&str, &str)]) -> Result<TlsSettings, TlsError> {
    TlsSettings::from_properties_with(&props(pairs), None)
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "rmq-transport-tls-settings-{}-{name}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn defaults_are_permissive_both_versions_no_client_tls() {
    let settings = parse(&[("listenPort", "9876")]).unwrap();
    assert_eq!(settings.mode, TlsMode::Permissive);
    assert!(!settings.mode_given);
    assert_eq!(settings.protocols, [TlsVersion::Tls12, TlsVersion::Tls13]);
    assert_eq!(settings.server.need_client_auth, ClientAuth::None);
    assert!(!settings.client_enabled());
    assert!(settings.warnings.is_empty(), "{:?}", settings.warnings);
}

#[test]
fn modes_and_client_auth_are_case_insensitive_and_unknown_ones_are_errors() {
    let settings = parse(&[(MODE, "ENFORCING"), (NEED_CLIENT_AUTH, "Require")]).unwrap();
    assert_eq!(settings.mode, TlsMode::Enforcing);
    assert_eq!(settings.server.need_client_auth, ClientAuth::Require);
    assert!(settings.client_enabled(), "enforcing implies tls.enable");
    let error = parse(&[(MODE, "enforcng")]).unwrap_err().to_string();
    assert!(error.starts_with("tls.server.mode: "), "{error}");
    let error = parse(&[(NEED_CLIENT_AUTH, "requre")])
        .unwrap_err()
        .to_string();
    assert!(error.contains("tls.server.need.client.auth"), "{error}");
}

#[test]
fn tls_enable_overrides_the_enforcing_default() {
    let settings = parse(&[(MODE, "enforcing"), (ENABLE, "false")]).unwrap();
    assert!(!settings.client_enabled());
    let settings = parse(&[(ENABLE, "TRUE")]).unwrap();
    assert!(settings.client_enabled());
}

#[test]
fn the_config_file_wins_over_the_map_except_for_system_property_keys() {
    let dir = scratch("file-wins");
    let file = dir.join("tls.properties");
    std::fs::write(
        &file,
        "tls.server.certPath=/from/file.pem\n\
         tls.server.mode=disabled\n\
         tls.server.need.client.auth=optional\n\
         listenPort=1\n",
    )
    .unwrap();
    let settings = parse(&[
        (CONFIG_FILE, file.to_str().unwrap()),
        (SERVER_CERT_PATH, "/from/map.pem"),
        (SERVER_KEY_PATH, "/from/map.key"),
    ])
    .unwrap();
    assert_eq!(
        settings.server.cert_path.as_deref(),
        Some(Path::new("/from/file.pem"))
    );
    assert_eq!(
        settings.server.key_path.as_deref(),
        Some(Path::new("/from/map.key"))
    );
    assert_eq!(settings.server.need_client_auth, ClientAuth::Optional);
    assert_eq!(
        settings.mode,
        TlsMode::Permissive,
        "mode is not read from the file"
    );
    assert_eq!(settings.config_file.as_deref(), Some(file.as_path()));
    let warnings: Vec<_> = settings.warnings.iter().map(|w| w.to_string()).collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("tls.server.mode (in ")),
        "{warnings:?}"
    );
    assert!(
        warnings.iter().any(|w| w.starts_with("listenPort (in ")),
        "{warnings:?}"
    );
    assert!(settings
        .key_name(SERVER_CERT_PATH)
        .contains(file.to_str().unwrap()));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_missing_config_file_is_an_error_naming_key_and_file() {
    let error = parse(&[(CONFIG_FILE, "/nonexistent/tls.properties")])
        .unwrap_err()
        .to_string();
    assert!(error.starts_with("tls.config.file: "), "{error}");
    assert!(error.contains("/nonexistent/tls.properties"), "{error}");
    // Java's default is read only when it exists.
    let missing = Path::new("/nonexistent/default.properties");
    assert!(TlsSettings::from_properties_with(&props(&[]), Some(missing)).is_ok());
}

#[test]
fn a_default_config_file_that_exists_is_read_and_said_so() {
    let dir = scratch("default-file");
    let file = dir.join("tls.properties");
    std::fs::write(&file, "tls.server.keyPassword=  secret \n").unwrap();
    let settings = TlsSettings::from_properties_with(&props(&[]), Some(&file)).unwrap();
    assert_eq!(settings.server.key_password.as_deref(), Some("secret "));
    assert!(settings.warnings.iter().any(|w| w.key == CONFIG_FILE));
    assert!(
        !format!("{settings:?}").contains("secret"),
        "password redacted"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn test_mode_and_odd_booleans_and_unknown_keys_are_warned_about() {
    let settings = parse(&[
        (TEST_MODE, "true"),
        (AUTH_CLIENT, "yes"),
        ("tls.server.certpath", "/x"),
    ])
    .unwrap();
    assert_eq!(settings.server.auth_client, Some(false));
    let keys: Vec<_> = settings.warnings.iter().map(|w| w.key.as_str()).collect();
    assert_eq!(
        keys,
        ["tls.server.certpath", AUTH_CLIENT, TEST_MODE],
        "{:?}",
        settings.warnings
    );
}

#[test]
fn protocols_keep_what_can_be_honoured_and_warn_about_the_rest() {
    let settings = parse(&[(PROTOCOLS, "TLSv1.3, TLSv1.1,SSLv3")]).unwrap();
    assert_eq!(settings.protocols, [TlsVersion::Tls13]);
    assert_eq!(settings.warnings.len(), 1);
    assert!(settings.warnings[0].message.contains("TLSv1.1, SSLv3"));
    let error = parse(&[(PROTOCOLS, "TLSv1")]).unwrap_err().to_string();
    assert!(error.starts_with("tls.protocols: "), "{error}");
}

#[test]
fn ciphers_take_java_rustls_and_openssl_names() {
    let settings = parse(&[(
        CIPHERS,
        "TLS_AES_128_GCM_SHA256,tls13_aes_256_gcm_sha384,ECDHE-RSA-AES128-GCM-SHA256,\
         TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,TLS_RSA_WITH_AES_128_CBC_SHA",
    )])
    .unwrap();
    assert_eq!(
        settings.ciphers.unwrap(),
        [
            CipherSuite::TLS13_AES_128_GCM_SHA256,
            CipherSuite::TLS13_AES_256_GCM_SHA384,
            CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
            CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
        ]
    );
    assert_eq!(settings.warnings.len(), 1, "{:?}", settings.warnings);
    assert!(settings.warnings[0]
        .message
        .contains("TLS_RSA_WITH_AES_128_CBC_SHA"));
    assert!(parse(&[(CIPHERS, "TLS_RSA_WITH_AES_128_CBC_SHA")]).is_err());
}

#[test]
fn ciphers_must_leave_a_suite_for_an_offered_version() {
    let error = parse(&[(PROTOCOLS, "TLSv1.2"), (CIPHERS, "TLS_AES_128_GCM_SHA256")])
        .unwrap_err()
        .to_string();
    assert!(error.starts_with("tls.ciphers: "), "{error}");
    let settings = parse(&[(CIPHERS, "TLS_AES_128_GCM_SHA256")]).unwrap();
    assert!(
        settings.warnings[0].message.contains("Tls12"),
        "{:?}",
        settings.warnings
    );
}

#[test]
fn the_suites_a_java_17_client_offers_first_are_known() {
    // A 5.5.0 Java client on JDK 17 (Netty's default list) offers c02c c02b
    // c02f c030, then ECDHE-RSA AES-CBC and RSA key exchange suites, then
    // 1301 1302; these six are enough to agree with it, the ones in between
    // are not needed.
    for name in [
        "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
        "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
        "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
        "TLS_AES_128_GCM_SHA256",
        "TLS_AES_256_GCM_SHA384",
    ] {
        assert!(suite_named(name).is_some(), "{name}");
    }
}
