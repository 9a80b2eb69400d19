//! The client side: one access key and secret, and signing an outgoing request
//! exactly as Java's `AclClientRPCHook` does.
//!
//! Also reads mqadmin's `conf/tools.yml`. Verification and accounts live
//! elsewhere (`signature`, `accounts`).

use std::fmt;
use std::path::Path;

use rmq_wire::{ExtFields, RemotingCommand};

use crate::accounts::{read_text, scalar_text, AccountsError};
use crate::signature::{self, ACCESS_KEY, SECURITY_TOKEN, SIGNATURE};

/// What a client signs with (Java `SessionCredentials`).
///
/// `Debug` shows the access key only.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    /// Sent in the clear as the `AccessKey` ext field.
    pub access_key: String,
    /// The HMAC key; never sent.
    pub secret_key: String,
    /// Sent (and signed) as `SecurityToken` when present; no Java server checks it.
    pub security_token: Option<String>,
}

impl Credentials {
    /// Credentials without a security token.
    pub fn new(access_key: impl Into<String>, secret_key: impl Into<String>) -> Credentials {
        Credentials {
            access_key: access_key.into(),
            secret_key: secret_key.into(),
            security_token: None,
        }
    }

    /// Adds `AccessKey`, then `SecurityToken` when there is one, then
    /// `Signature` over all ext fields present at that moment and the body,
    /// as `AclClientRPCHook.doBeforeRequest` does.
    ///
    /// Call it last, after every other ext field is set: fields added later
    /// travel unsigned and make Java servers (and ours) refuse the request. A
    /// `Signature` already present (a re-sent request) is replaced, and is not
    /// part of what is signed.
    pub fn sign_request(&self, cmd: &mut RemotingCommand) {
        let ext = cmd.ext_fields.get_or_insert_with(ExtFields::new);
        ext.insert(ACCESS_KEY.to_owned(), self.access_key.clone());
        if let Some(token) = &self.security_token {
            ext.insert(SECURITY_TOKEN.to_owned(), token.clone());
        }
        let content = signature::client_content(ext, cmd.body.as_deref());
        let signed = signature::sign(&self.secret_key, &content);
        ext.insert(SIGNATURE.to_owned(), signed);
    }

    /// Reads mqadmin's `tools.yml` (`accessKey:` and `secretKey:`, as
    /// `AclUtils.getAclRPCHook` reads them).
    ///
    /// # Errors
    /// The file cannot be read, is not YAML, or a key is missing or blank
    /// (where Java's mqadmin would silently send unsigned requests).
    pub fn from_tools_yml(path: &Path) -> Result<Credentials, AccountsError> {
        let text = read_text(path)?;
        Credentials::parse_tools_yml(&text, &path.display().to_string())
    }

    /// [`Credentials::from_tools_yml`] over text; `origin` names it in errors.
    ///
    /// # Errors
    /// As [`Credentials::from_tools_yml`].
    pub fn parse_tools_yml(text: &str, origin: &str) -> Result<Credentials, AccountsError> {
        let invalid = |line: Option<usize>, message: String| AccountsError::Invalid {
            origin: origin.to_owned(),
            line,
            message,
        };
        let document: serde_json::Value = serde_norway::from_str(text)
            .map_err(|e| invalid(e.location().map(|l| l.line()), e.to_string()))?;
        let Some(map) = document.as_object() else {
            return Err(invalid(
                None,
                "expected a mapping with accessKey and secretKey".into(),
            ));
        };
        let key = |name: &str| -> Result<String, AccountsError> {
            match map.get(name).map(scalar_text) {
                Some(Ok(Some(text))) if !text.trim().is_empty() => Ok(text),
                Some(Err(what)) => Err(invalid(None, format!("{name} {what}"))),
                _ => Err(invalid(None, format!("{name} is missing or blank"))),
            }
        };
        Ok(Credentials::new(key("accessKey")?, key("secretKey")?))
    }
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("access_key", &self.access_key)
            .field("secret_key", &"<redacted>")
            .field(
                "security_token",
                &self.security_token.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use rmq_wire::{frame, RequestCode, SerializeType};

    use super::*;

    #[test]
    fn signs_v1_as_the_java_hook_does() {
        let body = r#"{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":1,"stateVersion":0,"timestamp":1700000000000},"topicConfigTable":{}}}"#;
        let mut cmd = RemotingCommand::request(RequestCode::RegisterBroker, 7)
            .with_ext("brokerAddr", "192.168.0.10:10911")
            .with_ext("brokerId", "0")
            .with_ext("brokerName", "broker-a")
            .with_ext("clusterName", "DefaultCluster")
            .with_ext("compressed", "false")
            .with_ext("enableActingMaster", "false")
            .with_ext("haServerAddr", "192.168.0.10:10912")
            .with_ext("heartbeatTimeoutMillis", "30000")
            .with_ext("bodyCrc32", "385843084")
            .with_body(Bytes::from_static(body.as_bytes()));
        Credentials::new("rocketmq2", "12345678").sign_request(&mut cmd);
        assert_eq!(cmd.ext("AccessKey"), Some("rocketmq2"));
        assert_eq!(cmd.ext("SecurityToken"), None);
        assert_eq!(cmd.ext("Signature"), Some("wsjBuVRePgcs9irKVQRw1S2rAT0="));
    }

    #[test]
    fn signs_v2_with_a_token_and_survives_the_binary_header() {
        let mut cmd = RemotingCommand::request(RequestCode::WipeWritePermOfBroker, 3)
            .with_serialize_type(SerializeType::RocketMq)
            .with_ext("brokerName", "broker-a");
        let mut credentials = Credentials::new("RocketMQAdmin", "s3cr3t-Key/+=");
        credentials.security_token = Some("tok-42".into());
        credentials.sign_request(&mut cmd);
        assert_eq!(cmd.ext("Signature"), Some("PzF1Uwx/Qqg6nIxH1HD+UZMe2H8="));

        let decoded = frame::decode(frame::encode_to_bytes(&cmd)).unwrap();
        let ext = decoded.ext_fields.as_ref().unwrap();
        let content = signature::content(ext, decoded.body.as_deref(), decoded.version);
        assert!(signature::verify(
            "s3cr3t-Key/+=",
            &content,
            decoded.ext("Signature").unwrap()
        ));
    }

    #[test]
    fn signs_v4_body_without_header_and_replaces_an_old_signature() {
        let mut cmd = RemotingCommand::request(RequestCode::UpdateNamesrvConfig, 1).with_body(
            Bytes::from_static(b"orderMessageEnable=true\nclusterTest=false\n"),
        );
        let credentials = Credentials::new("rocketmq2", "12345678");
        credentials.sign_request(&mut cmd);
        credentials.sign_request(&mut cmd);
        assert_eq!(cmd.ext("Signature"), Some("eZp2YN27Ly4eVZnpRgpg2muAqMQ="));
    }

    #[test]
    fn client_signs_unique_key_query_whatever_the_version() {
        let mut cmd = RemotingCommand::request(RequestCode::Unknown(12), 1)
            .with_ext("_UNIQUE_KEY_QUERY", "true")
            .with_ext("topic", "T");
        cmd.version = 399;
        let credentials = Credentials::new("rocketmq2", "12345678");
        credentials.sign_request(&mut cmd);
        let ext = cmd.ext_fields.as_ref().unwrap();
        let claimed = cmd.ext("Signature").unwrap();
        assert!(signature::verify(
            "12345678",
            &signature::client_content(ext, None),
            claimed
        ));
        // Old clients add the field after their hook ran, so a 5.x server
        // leaves it out for version <= 399; one signed along with the rest is
        // then refused, by Java and by us alike.
        assert!(!signature::verify(
            "12345678",
            &signature::content(ext, None, 399),
            claimed
        ));
    }

    #[test]
    fn reads_tools_yml_like_mqadmin() {
        let creds = Credentials::parse_tools_yml(
            "# stock file\naccessKey: rocketmq2\nsecretKey: 12345678\n",
            "tools.yml",
        )
        .unwrap();
        assert_eq!(creds, Credentials::new("rocketmq2", "12345678"));
        assert!(!format!("{creds:?}").contains("12345678"));

        let err = Credentials::parse_tools_yml("accessKey: a\nsecretKey: ' '\n", "tools.yml")
            .unwrap_err();
        assert_eq!(err.to_string(), "tools.yml: secretKey is missing or blank");
        let err = Credentials::parse_tools_yml("accessKey: [a\n", "tools.yml").unwrap_err();
        assert!(err.to_string().starts_with("tools.yml:2: "), "{err}");
    }

    #[test]
    fn reads_tools_yml_from_a_file() {
        let dir = std::env::temp_dir().join(format!("rmq-auth-tools-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("tools.yml");
        std::fs::write(&path, "accessKey: admin-key\nsecretKey: \"s3cret-key\"\n").unwrap();
        let creds = Credentials::from_tools_yml(&path).unwrap();
        assert_eq!(creds.secret_key, "s3cret-key");
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(matches!(
            Credentials::from_tools_yml(&path),
            Err(AccountsError::Read { .. })
        ));
    }
}
