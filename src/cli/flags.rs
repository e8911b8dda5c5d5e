//! The flags of the kinds of data: each kind declares its options once ([`OptionSpec`]), and
//! [`kind_flags`] makes a typed clap flag of each, so a kind registered in the [`Registry`] gets
//! its flags with no edit to the program; [`kind_options`] turns the flags given back into that
//! kind's named options ([`Options`]).

use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches};
use serde_json::Value;
use std::path::PathBuf;

use crate::kind::{Kind, OptionSpec, OptionType, Options, Registry};

/// When a kind's option is used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// `genie build`.
    Build,
    /// `genie search`.
    Search,
}

/// The options of `kind` in `phase`.
pub fn specs(kind: &dyn Kind, phase: Phase) -> &[OptionSpec] {
    match phase {
        Phase::Build => kind.build_options(),
        Phase::Search => kind.search_options(),
    }
}

/// `command` with a flag for every option of `phase` that the registry's kinds declare. A
/// kind's option named as an argument of the command itself gets no flag (it stays an option of
/// requests and Python only).
pub fn kind_flags(command: clap::Command, registry: &Registry, phase: Phase) -> clap::Command {
    let own: Vec<Arg> = kind_args(registry, phase)
        .into_iter()
        .filter(|a| command.get_arguments().all(|b| b.get_id() != a.get_id()))
        .collect();
    command.args(own)
}

/// One flag per option name of `phase`; kinds that declare the same name share its flag (the
/// same type), and its help names each kind.
fn kind_args(registry: &Registry, phase: Phase) -> Vec<Arg> {
    let mut named: Vec<(OptionSpec, Vec<&str>)> = Vec::new();
    for kind in registry.kinds() {
        for spec in specs(kind.as_ref(), phase) {
            match named.iter_mut().find(|(s, _)| s.name == spec.name) {
                Some((_, kinds)) => kinds.push(kind.name()),
                None => named.push((*spec, vec![kind.name()])),
            }
        }
    }
    named
        .into_iter()
        .map(|(spec, kinds)| {
            let help: Vec<String> = kinds
                .iter()
                .filter_map(|k| {
                    let kind = registry.get(k).ok()?;
                    let own = specs(kind.as_ref(), phase)
                        .iter()
                        .find(|s| s.name == spec.name)?;
                    Some(if kinds.len() == 1 {
                        own.help.to_string()
                    } else {
                        format!("{}: {}", capitalized(k), own.help)
                    })
                })
                .collect();
            let heading = if kinds.len() == 1 {
                format!("Options of --kind {}", kinds[0])
            } else {
                "Options of several kinds".to_string()
            };
            let arg = Arg::new(spec.name)
                .long(spec.name.replace('_', "-"))
                .help(help.join("\n"))
                .help_heading(heading);
            match spec.ty {
                OptionType::Flag => arg.action(ArgAction::SetTrue),
                OptionType::U32 { min, max } => arg
                    .value_name(spec.value_name)
                    .value_parser(clap::value_parser!(u32).range(i64::from(min)..=i64::from(max))),
                OptionType::U64 => arg
                    .value_name(spec.value_name)
                    .value_parser(clap::value_parser!(u64)),
                OptionType::F64 => arg
                    .value_name(spec.value_name)
                    .value_parser(clap::value_parser!(f64)),
                OptionType::Text => arg.value_name(spec.value_name),
                OptionType::Choice(words) => arg
                    .value_name(spec.value_name)
                    .value_parser(clap::builder::PossibleValuesParser::new(words)),
                OptionType::Names => arg
                    .value_name(spec.value_name)
                    .value_delimiter(',')
                    .action(ArgAction::Append),
                OptionType::Path => arg
                    .value_name(spec.value_name)
                    .value_parser(clap::value_parser!(PathBuf)),
            }
        })
        .collect()
}

fn capitalized(word: &str) -> String {
    let mut c = word.chars();
    c.next().map_or_else(String::new, |f| {
        f.to_uppercase().chain(c).collect::<String>()
    })
}

/// The options of `kind` given on the command line (`matches`: the subcommand's). An option of
/// another kind is an error naming the kinds it applies to.
pub fn kind_options(
    registry: &Registry,
    kind: &dyn Kind,
    matches: &ArgMatches,
    phase: Phase,
) -> anyhow::Result<Options> {
    let mut options = Options::new();
    let mut seen: Vec<&str> = Vec::new();
    for other in registry.kinds() {
        for spec in specs(other.as_ref(), phase) {
            if seen.contains(&spec.name)
                || matches.value_source(spec.name) != Some(ValueSource::CommandLine)
            {
                continue;
            }
            seen.push(spec.name);
            let Some(own) = specs(kind, phase).iter().find(|s| s.name == spec.name) else {
                anyhow::bail!(
                    "{} applies to --kind {}, not to {}",
                    spec.flag_name(),
                    registry.kinds_taking(spec.name).join(" and "),
                    kind.name()
                );
            };
            options.set(own.name, value_of(own, matches));
        }
    }
    Ok(options)
}

/// The value of a given option as JSON.
fn value_of(spec: &OptionSpec, m: &ArgMatches) -> Value {
    let name = spec.name;
    match spec.ty {
        OptionType::Flag => m.get_flag(name).into(),
        OptionType::U32 { .. } => m.get_one::<u32>(name).copied().into(),
        OptionType::U64 => m.get_one::<u64>(name).copied().into(),
        OptionType::F64 => m.get_one::<f64>(name).copied().into(),
        OptionType::Text | OptionType::Choice(_) => m.get_one::<String>(name).cloned().into(),
        OptionType::Names => m
            .get_many::<String>(name)
            .map(|v| v.cloned().collect::<Vec<_>>())
            .into(),
        OptionType::Path => m
            .get_one::<PathBuf>(name)
            .map(|p| p.to_string_lossy().into_owned())
            .into(),
    }
}

/// The files that the options of type path name, with their flags (inputs a build reads).
pub fn option_paths(kind: &dyn Kind, options: &Options, phase: Phase) -> Vec<(PathBuf, String)> {
    specs(kind, phase)
        .iter()
        .filter(|s| s.ty == OptionType::Path)
        .filter_map(|s| {
            let path = options.str(s.name).ok().flatten()?;
            Some((PathBuf::from(path), format!("the {} file", s.flag_name())))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data_error::DataError;
    use crate::kind::{
        BuildJob, BuildReport, IndexSource, KindIndex, KindInfo, OpenOptions, Placement,
    };
    use std::sync::Arc;

    /// A kind of one's own: it declares two options and gets their flags, with no edit here.
    struct Words;

    const WORDS_OPTIONS: &[OptionSpec] = &[
        OptionSpec::u32("min_len", 1, "N", "Shortest word kept."),
        OptionSpec::new(
            "case",
            OptionType::Choice(&["keep", "fold"]),
            "CASE",
            "Letter case.",
        ),
    ];

    const WORDS: KindInfo = KindInfo {
        build_options: WORDS_OPTIONS,
        ..KindInfo::new("words", "words")
    };

    impl Kind for Words {
        fn info(&self) -> &KindInfo {
            &WORDS
        }
        fn build(&self, _: &BuildJob<'_>) -> Result<BuildReport, DataError> {
            Err(DataError::Unsupported("not in this test".into()))
        }
        fn open(
            &self,
            _: &IndexSource,
            _: Placement,
            _: &OpenOptions,
        ) -> Result<Box<dyn KindIndex>, DataError> {
            Err(DataError::Unsupported("not in this test".into()))
        }
    }

    /// A command line like the program's: `build` with its own arguments and the kinds' flags.
    fn command(registry: &Registry) -> clap::Command {
        let build = clap::Command::new("build")
            .arg(Arg::new("input").short('i').long("input").required(true))
            .arg(Arg::new("output").short('o').long("output").required(true))
            .arg(Arg::new("kind").long("kind").default_value("keywords"));
        clap::Command::new("genie").subcommand(kind_flags(build, registry, Phase::Build))
    }

    fn parse(registry: &Registry, line: &[&str]) -> Result<ArgMatches, clap::Error> {
        command(registry)
            .try_get_matches_from(line)
            .map(|m| m.subcommand().map(|(_, s)| s.clone()).unwrap_or_default())
    }

    #[test]
    fn a_registered_kind_gets_its_flags() {
        let mut registry = Registry::default();
        registry.register(Arc::new(Words));
        let m = parse(
            &registry,
            &[
                "genie",
                "build",
                "--kind",
                "words",
                "-i",
                "x",
                "-o",
                "y",
                "--min-len",
                "3",
                "--case",
                "fold",
            ],
        )
        .expect("parsed");
        let options = kind_options(&registry, &Words, &m, Phase::Build).expect("options");
        assert_eq!(
            options.to_json(),
            serde_json::json!({"min_len": 3, "case": "fold"})
        );
        // typed and checked by the parser
        assert!(parse(
            &registry,
            &["genie", "build", "-i", "x", "-o", "y", "--case", "up"]
        )
        .is_err());
        assert!(parse(
            &registry,
            &["genie", "build", "-i", "x", "-o", "y", "--min-len", "0"]
        )
        .is_err());
        // another kind's option is refused, naming the kind it applies to
        let m = parse(
            &registry,
            &["genie", "build", "-i", "x", "-o", "y", "--min-len", "2"],
        )
        .expect("parsed");
        let keywords = registry.get("keywords").expect("keywords");
        let err = kind_options(&registry, keywords.as_ref(), &m, Phase::Build)
            .expect_err("not a keywords option");
        assert_eq!(
            err.to_string(),
            "--min-len applies to --kind words, not to keywords"
        );
        // without the kind, no such flag
        assert!(parse(
            &Registry::default(),
            &["genie", "build", "-i", "x", "-o", "y", "--min-len", "2"]
        )
        .is_err());
    }

    #[test]
    fn the_built_in_kinds_agree_on_shared_names() {
        let registry = Registry::default();
        for phase in [Phase::Build, Phase::Search] {
            let all: Vec<&OptionSpec> = registry
                .kinds()
                .flat_map(|k| specs(k.as_ref(), phase))
                .collect();
            for a in &all {
                for b in all.iter().filter(|b| b.name == a.name) {
                    assert_eq!(a.ty, b.ty, "{phase:?} option {} of two types", a.name);
                }
            }
        }
        command(&registry).debug_assert();
    }
}
