//! Records the git revision the binaries were built from, for `--version`,
//! the start-up line and `waymark_build_info`. `WAYMARK_GIT_REVISION` wins
//! (a container build has no `.git`); without either it is `unknown`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=WAYMARK_GIT_REVISION");
    let revision = std::env::var("WAYMARK_GIT_REVISION")
        .ok()
        .filter(|value| !value.is_empty())
        .or_else(git_revision)
        .unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=WAYMARK_GIT_REVISION={revision}");
}

fn git_revision() -> Option<String> {
    let dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR")?);
    let git_dir = run(&dir, &["rev-parse", "--absolute-git-dir"])?;
    // Build again when HEAD moves: HEAD itself (a checkout), and the branch
    // it names (a commit), whether packed or loose. The branch is watched
    // through the directory that holds its loose file, which Cargo scans
    // whole: a commit on a packed branch creates that file rather than
    // changing one.
    let git_dir = Path::new(&git_dir);
    let mut watched = vec![git_dir.join("HEAD"), git_dir.join("packed-refs")];
    if let Some(branch) = run(&dir, &["symbolic-ref", "-q", "HEAD"]) {
        if let Some(refs) = git_dir.join(branch).parent() {
            watched.push(refs.to_path_buf());
        }
    }
    // Cargo counts a watched path that does not exist as changed on every
    // build, which would rebuild this crate and all that depend on it each
    // time (a fresh clone often has no packed-refs); packing refs later
    // changes the branch's directory.
    for path in watched.iter().filter(|path| path.exists()) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    run(&dir, &["rev-parse", "--short=12", "HEAD"])
}

fn run(dir: &Path, args: &[&str]) -> Option<String> {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8(output.stdout).ok()?;
    Some(text.trim().to_owned()).filter(|text| !text.is_empty())
}
