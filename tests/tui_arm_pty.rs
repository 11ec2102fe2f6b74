//! End to end (issue 28 item 4): the sessions pane of an Azure pool heads the
//! pool's list with its card from ARM in short ("egress · cooldown · N of max
//! alive"), its pool info (`i`) shows the whole card, and it says which role
//! is missing when ARM refuses: the real binary
//! in a pseudo-terminal, against a loopback stand-in of the data plane and of
//! ARM (`tests/common/arm.rs`) answering the spec's example.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

mod common;
mod pty;
#[path = "common/arm.rs"]
mod stand;

use std::time::Duration;

use expectrl::WaitStatus;
use pty::*;
use stand::{ARM_TOKEN, Arm, DP_TOKEN, GET, POOL, SUB, stand_in};

const F3: &str = "\x1bOR";

/// The notebook on the stand-in's pool, its sessions pane opened (`F3`);
/// returns the pty once `what` shows.
fn pane_showing(arm: Arm, what: &str) -> (Pty, String) {
    let (_stand, base) = stand_in(arm, &[("a", 10), ("b", 20)]);
    let data = tempfile::tempdir().unwrap().keep();
    let work = tempfile::tempdir().unwrap().keep();
    let endpoint = format!("{base}/subscriptions/{SUB}/resourceGroups/rg/sessionPools/{POOL}");
    let args = [
        "--endpoint",
        &endpoint,
        "--token",
        DP_TOKEN,
        "--identifier",
        "arm-pty",
    ];
    let envs = [
        ("SESSIONPAD_ARM_ENDPOINT", base.as_str()),
        ("SESSIONPAD_ARM_TOKEN", ARM_TOKEN),
    ];
    let mut pty = Pty::spawn_with(&data, &work, &args, &envs);
    pty.wait_for("the first frame", CELL_DEADLINE, |s| {
        s.contains("arm-pty │")
    });
    keys(&mut pty, &[F3]);
    let screen = pty.wait_for(what, CELL_DEADLINE, |s| s.contains(what));
    (pty, screen)
}

#[test]
fn the_sessions_pane_heads_an_azure_pool_with_its_card() {
    let (mut pty, screen) = pane_showing(Arm::Example(GET), "Pool · egress on · cooldown 600 s");
    println!("{screen}");
    // "N of max alive": the two sessions listed, of the example's 500.
    assert!(screen.contains("2 of 500 alive"), "{screen}");
    // The pool info (`i`) opens with the whole card (the metadata below it).
    keys(&mut pty, &["i"]);
    let info = pty.wait_for("the card in the pool info", CELL_DEADLINE, |s| {
        s.contains("Session pool (ARM)") && s.contains("kept ready")
    });
    println!("{info}");
    for words in [
        "egress",
        "EgressEnabled",
        "Timed, cooldown 600 s",
        "2 of 500 alive, 100 kept ready",
        "repo/testcontainer:v4",
    ] {
        assert!(info.contains(words), "{words:?} not in\n{info}");
    }
    pty.send(CTRL_Q);
    let status = pty.wait_exit(Duration::from_secs(30));
    assert!(matches!(status, WaitStatus::Exited(_, 0)), "{status:?}");

    let (mut pty, screen) = pane_showing(Arm::Forbidden, "pool card: ARM refused (403");
    println!("{screen}");
    assert!(screen.contains("Pool · 2"), "{screen}");
    // The pane is narrow: the reason is wrapped, the role within its lines.
    assert!(screen.contains("\"Reader\" role"), "{screen}");
    pty.send(CTRL_Q);
    let status = pty.wait_exit(Duration::from_secs(30));
    assert!(matches!(status, WaitStatus::Exited(_, 0)), "{status:?}");
}
