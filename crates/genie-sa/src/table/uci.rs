//! Column names of a header-less UCI data file from its `.names` description (as for the Adult
//! data of the paper's section VI-A: `adult.data` has no header, `adult.names` describes it).
//!
//! Rules: text after a `|` is a comment; a line `NAME: SPEC.` names the next attribute; when a
//! line of class values (no `:`, e.g. `>50K, <=50K.`) comes before the first attribute, the data
//! ends with a class column, named `class`.

use crate::error::{Result, SaError};

/// The name given to the class column.
pub const CLASS_COLUMN: &str = "class";

/// The column names described by the text of a UCI `.names` file.
///
/// ```
/// let text = "| comment\n>50K, <=50K.\n\nage: continuous.\nsex: Female, Male.\n";
/// assert_eq!(genie_sa::table::uci::column_names(text).unwrap(), ["age", "sex", "class"]);
/// ```
pub fn column_names(text: &str) -> Result<Vec<String>> {
    let mut names = Vec::new();
    let mut class = false;
    for line in text.lines() {
        let line = line.split('|').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        match line.split_once(':') {
            Some((name, _)) => names.push(name.trim().to_string()),
            None if names.is_empty() => class = true,
            None => {}
        }
    }
    if names.is_empty() {
        return Err(SaError::InvalidParameter(
            "no attribute line (NAME: TYPE.) in the .names text".into(),
        ));
    }
    if class {
        names.push(CLASS_COLUMN.to_string());
    }
    Ok(names)
}
