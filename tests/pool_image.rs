//! The local pool's images (issue 28): the default one carries what the
//! service's PythonLTS image documents (Microsoft's code interpreter docs:
//! "popular Python packages such as `NumPy`, pandas, and scikit-learn", listed
//! there with `import pkg_resources`) and what published clients import
//! (autogen-ext: `pkg_resources`, polars), each importing in a sandboxed
//! session without a warning; `--image minimal` keeps the small set. `pool
//! info` names the image and lists the versions the built environment holds.
#![allow(clippy::unwrap_used)] // test set-up and helpers unwrap: a panic is the test's failure, with its location

mod common;

use common::{LIMIT, TestPool, identifier};
use sessionpad::protocol::image::Image;
use sessionpad::protocol::{ApiVersion, ExecutionStatus};

/// Every module the default image promises, imported with every warning shown
/// once (`default`), in a fresh session: nothing on stderr.
#[tokio::test]
async fn the_default_image_imports_what_the_service_documents_without_a_warning() {
    let pool = TestPool::start().await;
    let c = pool.client(ApiVersion::V2025_10_02);
    let code = "import warnings\nwarnings.simplefilter('default')\n\
                import numpy, pandas, matplotlib, sklearn, scipy, seaborn, requests, polars, pkg_resources\n\
                import sklearn.linear_model, scipy.stats\n\
                print(sorted(d.project_name for d in pkg_resources.working_set if d.project_name in ('scikit-learn', 'polars')))";
    let e = c.execute(&identifier(), code, LIMIT).await.unwrap();
    assert_eq!(e.status, ExecutionStatus::Succeeded, "{e:?}");
    assert_eq!(e.stderr, "", "no warning at import");
    assert_eq!(e.stdout, "['polars', 'scikit-learn']\n", "{e:?}");
    let meta = c.pool_metadata().await.unwrap();
    assert_eq!(meta.image, Some(Image::PythonLts), "{meta:?}");
    for name in [
        "scikit-learn",
        "scipy",
        "seaborn",
        "requests",
        "polars",
        "setuptools",
    ] {
        assert!(
            meta.packages
                .iter()
                .any(|p| p.name.eq_ignore_ascii_case(name) && !p.version.is_empty()),
            "{name} listed with its version: {:?}",
            meta.packages
        );
    }
}

/// `--image minimal` (here the pool option it sets): a kernel, `NumPy`, pandas
/// and Matplotlib, and no scikit-learn.
#[tokio::test]
async fn the_minimal_image_has_the_small_set_and_no_scikit_learn() {
    let pool = TestPool::start_with(|o| o.image = Image::Minimal).await;
    let c = pool.client(ApiVersion::V2025_10_02);
    let id = identifier();
    let e = c
        .execute(&id, "import numpy, pandas, matplotlib; 'ok'", LIMIT)
        .await
        .unwrap();
    assert_eq!(e.status, ExecutionStatus::Succeeded, "{e:?}");
    let e = c.execute(&id, "import sklearn", LIMIT).await.unwrap();
    assert_eq!(e.status, ExecutionStatus::Failed, "{e:?}");
    assert!(
        e.stderr.contains("ModuleNotFoundError") && e.stderr.contains("sklearn"),
        "{}",
        e.stderr
    );
    let meta = c.pool_metadata().await.unwrap();
    assert_eq!(meta.image, Some(Image::Minimal), "{meta:?}");
    assert!(
        !meta
            .packages
            .iter()
            .any(|p| p.name.eq_ignore_ascii_case("scikit-learn")),
        "{:?}",
        meta.packages
    );
}

/// `sessionpad pool info` against `serve --image minimal`: the image by name
/// and each package with its version, in text and in `--json`.
#[test]
fn pool_info_names_the_image_and_the_package_versions() {
    let data = tempfile::tempdir().unwrap();
    let mut serve = common::serve_command(data.path(), "image-token", 0);
    serve.args(["--image", "minimal"]);
    let (child, endpoint) = common::spawn_serve(serve);
    let _served = common::Served(child);
    let info = |json: bool| {
        let mut cmd = common::sessionpad_command(data.path());
        if json {
            cmd.arg("--json");
        }
        common::stdout_ok(cmd.args([
            "--endpoint",
            &endpoint,
            "--token",
            "image-token",
            "pool",
            "info",
        ]))
    };
    let text = info(false);
    assert!(
        text.lines().any(|l| l.starts_with("image: minimal (")),
        "{text}"
    );
    let numpy = text
        .lines()
        .find(|l| l.starts_with("  numpy "))
        .unwrap_or_else(|| panic!("numpy listed: {text}"));
    assert!(
        numpy["  numpy ".len()..].starts_with(|c: char| c.is_ascii_digit()),
        "{numpy}"
    );
    let v: serde_json::Value = serde_json::from_str(&info(true)).unwrap();
    assert_eq!(v["image"], "minimal", "{v}");
    let packages = v["packages"].as_array().unwrap();
    assert!(
        packages
            .iter()
            .any(|p| p["name"] == "numpy" && p["version"].as_str().is_some_and(|s| !s.is_empty())),
        "{v}"
    );
    assert!(!packages.iter().any(|p| p["name"] == "scikit-learn"), "{v}");
}
