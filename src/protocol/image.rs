//! Which set of packages the local pool's built Python environment holds (its
//! "image"): a name given by `serve --image` and the config's `[pool] image`;
//! what each set holds is the pool's ([`crate::pool::image::requirements`]).

/// Which set of packages a built environment holds: the local pool's "image".
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(try_from = "String")]
pub enum Image {
    /// Like the service's PythonLTS image (the default): what Microsoft's code
    /// interpreter docs name (`NumPy`, pandas, scikit-learn) and more, with
    /// `pkg_resources` (`assets/python/requirements.txt`). Written `pythonlts`.
    #[default]
    PythonLts,
    /// A kernel, `NumPy`, pandas and Matplotlib only
    /// (`assets/python/requirements-minimal.txt`). Written `minimal`.
    Minimal,
}

impl Image {
    /// The name it is written with (`--image`, `[pool] image`): `pythonlts`
    /// or `minimal`.
    pub fn name(self) -> &'static str {
        match self {
            Self::PythonLts => "pythonlts",
            Self::Minimal => "minimal",
        }
    }
}

/// Written as its name ([`Image::name`]), as it is read.
impl serde::Serialize for Image {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// The field of a sessionpad local pool's `GET metadata` that names the image
/// its Python environment was built with (`pythonlts`, `minimal`); absent for a
/// pool running a user-given interpreter, and from Azure's pools.
pub const METADATA_FIELD: &str = "sessionpadImage";

impl std::fmt::Display for Image {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Image {
    type Err = String;

    /// `pythonlts` (also `python`, `full`) or `minimal`, in any case.
    ///
    /// # Errors
    ///
    /// Any other name, with the names that are known.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "pythonlts" | "python" | "full" => Ok(Self::PythonLts),
            "minimal" => Ok(Self::Minimal),
            other => Err(format!(
                "unknown image {other:?}: pythonlts (the default) or minimal"
            )),
        }
    }
}

impl TryFrom<String> for Image {
    type Error = String;

    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}
