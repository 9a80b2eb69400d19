//! Obtaining this replica's controller broker id (Java's
//! `ReplicasManager.register` up to CONTROLLER_REGISTER_BROKER):
//! load it from the identity file, or ask for the next id, record it in the
//! temporary file, apply for it, and only then make it ours.
//!
//! Crash safety comes from the order: the temporary file is on disk before
//! the apply, so a replica that crashes between the apply and the identity
//! file applies again with the same check code, which the controller
//! accepts, and ends up with the same id.

use rmq_wire::ResponseCode;

use super::client::ControllerClient;
use super::identity::{BrokerIdentity, IdentityFiles, PendingIdentity, Stored};
use crate::error::ControllerError;
use crate::registrar::wall_ms;

/// Where an id came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IdOrigin {
    /// The identity file.
    File,
    /// The temporary file of an earlier, interrupted attempt, applied again.
    Reapplied,
    /// A fresh id from CONTROLLER_GET_NEXT_BROKER_ID.
    Assigned,
}

/// Who is joining: the names and address a replica applies with.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Joiner<'a> {
    pub(crate) cluster: &'a str,
    pub(crate) broker_name: &'a str,
    pub(crate) broker_addr: &'a str,
}

impl Joiner<'_> {
    /// The id of this replica, obtained as the module doc says.
    ///
    /// Differences from Java, both to keep an id rather than waste one: the
    /// temporary file is deleted only when the controller refuses the id
    /// (CONTROLLER_BROKER_ID_INVALID), not when the apply merely failed to
    /// get an answer (it may have been committed); and a stale temporary
    /// file beside a valid identity file is removed.
    pub(crate) async fn obtain_id(
        &self,
        client: &ControllerClient,
        files: &IdentityFiles,
    ) -> Result<(i64, IdOrigin), ControllerError> {
        let (pending, origin) = match files.load()? {
            Stored::Owned(identity) => {
                self.check(files, &identity, false)?;
                files.remove_pending()?;
                return Ok((identity.broker_id, IdOrigin::File));
            }
            Stored::Pending(pending) => {
                self.check(files, &pending.identity, true)?;
                (pending, IdOrigin::Reapplied)
            }
            Stored::Nothing => {
                let next = client
                    .next_broker_id(self.cluster, self.broker_name)
                    .await?;
                let pending = PendingIdentity::new(
                    self.cluster,
                    self.broker_name,
                    next,
                    self.broker_addr,
                    wall_ms(),
                );
                if let Err(error) = files.write_pending(&pending) {
                    let _ = files.remove_pending();
                    return Err(error.into());
                }
                (pending, IdOrigin::Assigned)
            }
        };
        let id = pending.identity.broker_id;
        let applied = client
            .apply_broker_id(
                self.cluster,
                self.broker_name,
                id,
                &pending.register_check_code,
            )
            .await;
        if let Err(error) = applied {
            if error.code() == Some(ResponseCode::ControllerBrokerIdInvalid.into()) {
                // Taken by another replica: the next attempt asks for a new id.
                files.remove_pending()?;
            }
            return Err(error);
        }
        match files.promote(&pending) {
            Ok(identity) => Ok((identity.broker_id, origin)),
            Err(error) => {
                let _ = files.remove_identity();
                Err(error.into())
            }
        }
    }

    /// Java refuses a file of another cluster or broker set at every try.
    fn check(
        &self,
        files: &IdentityFiles,
        identity: &BrokerIdentity,
        temp: bool,
    ) -> Result<(), ControllerError> {
        if identity.cluster_name == self.cluster && identity.broker_name == self.broker_name {
            return Ok(());
        }
        let file = if temp {
            files.temp_path()
        } else {
            files.path()
        };
        Err(ControllerError::IdentityMismatch {
            file: file.display().to_string(),
            found: format!("{}#{}", identity.cluster_name, identity.broker_name),
            expected: format!("{}#{}", self.cluster, self.broker_name),
        })
    }
}
