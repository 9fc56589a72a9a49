//! The campaign file's form, as serde reads it: a struct per table that refuses a key it does
//! not have (`deny_unknown_fields`), each value kept with its place in the file (`Spanned`),
//! so that [`super::file`] can say every fault at its line. Values stay untyped
//! ([`Value`]) here: what each must be is said by the reader, in the file's words, which
//! serde's own messages ("invalid type: string, expected u32") are not.
//!
//! A study is a table whose keys its kind decides, so it is read as a map of its keys; its
//! kind's declarations check them ([`super::file`]). serde's `#[serde(tag = "kind")]` cannot
//! carry it: an internally tagged enum buffers the table before it sees the tag, and a
//! buffered value has lost the spans every line of a message needs.

use super::Value;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

/// A value as written, where the file gives it.
pub(super) type Item = Option<Spanned<Value>>;

/// A study's table: its keys (`-` for `_`), each with its value.
pub(super) type StudyForm = BTreeMap<Spanned<String>, Spanned<Value>>;

/// The whole file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Form {
    pub campaign: Option<Spanned<CampaignForm>>,
    #[serde(default)]
    pub target: Vec<Spanned<TargetForm>>,
    #[serde(default)]
    pub study: Vec<Spanned<StudyForm>>,
    pub cache: Option<CacheForm>,
    pub hooks: Option<HooksForm>,
    #[serde(default)]
    pub event: Vec<Spanned<EventForm>>,
    pub batch: Option<Spanned<BatchForm>>,
}

/// `[campaign]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CampaignForm {
    pub name: Item,
    pub repetitions: Item,
    pub summary: Item,
    pub order: Item,
    pub seed: Item,
    pub budget: Item,
}

/// A `[[target]]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TargetForm {
    pub label: Item,
    pub dir: Item,
    pub device: Item,
    pub s3: Item,
    pub description: Item,
}

/// `[cache]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) struct CacheForm {
    pub drop_caches: Item,
    pub direct: Item,
    pub reorder: Item,
    pub data: Item,
    pub data_rule: Item,
}

/// `[hooks]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) struct HooksForm {
    pub before_run: Option<Spanned<HookForm>>,
    pub after_run: Option<Spanned<HookForm>>,
    pub before_study: Option<Spanned<HookForm>>,
    pub after_study: Option<Spanned<HookForm>>,
}

/// A hook: its command alone, or a table of it and where it runs.
pub(super) enum HookForm {
    /// The value given in place of a table (a command, if it is a string).
    Command(Value),
    /// `{ command, on, on-failure }`.
    Table(HookTable),
}

/// A hook's table.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) struct HookTable {
    pub command: Item,
    pub on: Item,
    pub on_failure: Item,
}

/// An `[[event]]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct EventForm {
    pub study: Item,
    pub target: Item,
    pub clients: Item,
    pub at: Item,
    pub command: Item,
}

/// `[batch]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) struct BatchForm {
    pub partition: Item,
    pub account: Item,
    pub launcher: Item,
    pub modules: Item,
    pub setup: Item,
    pub tasks_per_node: Item,
    pub nodes: Item,
    pub margin: Item,
    pub point_time: Item,
    pub iosurvey: Item,
}

/// The keys of the table at `path` (a top-level key, then the keys inside it), as serde
/// takes them; None for a study, whose keys its kind decides.
pub(super) fn keys_at(path: &[String]) -> Option<&'static [&'static str]> {
    Some(match (path.first().map(String::as_str), path.len()) {
        (None, _) => fields::<Form>(),
        (Some("campaign"), 1) => fields::<CampaignForm>(),
        (Some("target"), 1) => fields::<TargetForm>(),
        (Some("cache"), 1) => fields::<CacheForm>(),
        (Some("hooks"), 1) => fields::<HooksForm>(),
        (Some("hooks"), 2) => fields::<HookTable>(),
        (Some("event"), 1) => fields::<EventForm>(),
        (Some("batch"), 1) => fields::<BatchForm>(),
        _ => return None,
    })
}

/// The keys serde's derive gives `T`, as its struct names them: the one list the reader
/// checks and suggests keys from, so that it cannot drift from what is read.
fn fields<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    let mut found: &'static [&'static str] = &[];
    // The probe answers only the struct's own question; the error that ends it is expected.
    let _ = T::deserialize(Probe(&mut found));
    found
}

/// A deserializer that asks nothing of a struct but its field names.
struct Probe<'a>(&'a mut &'static [&'static str]);

#[derive(Debug)]
struct Asked;

impl std::fmt::Display for Asked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("only the field names were asked for")
    }
}

impl std::error::Error for Asked {}

impl de::Error for Asked {
    fn custom<T: std::fmt::Display>(_: T) -> Self {
        Asked
    }
}

impl<'de> Deserializer<'de> for Probe<'_> {
    type Error = Asked;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Asked> {
        Err(Asked)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Asked> {
        *self.0 = fields;
        Err(Asked)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
    }
}

/// The name toml gives the one key of the map a date is read as.
const DATE_KEY: &str = "$__toml_private_datetime";

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
}

/// A value: a string, a number, true or false, or a list of them. A table or a date is
/// refused; the reader says so in the file's words, from what the file holds there.
struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a string, a number, true or false, or a list of them")
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Value, E> {
        Ok(Value::Str(s.to_string()))
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<Value, E> {
        Ok(Value::Str(s))
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Value, E> {
        Ok(Value::Int(n))
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Value, E> {
        i64::try_from(n).map(Value::Int).map_err(|_| E::custom("a whole number iosurvey cannot hold"))
    }

    fn visit_i128<E: de::Error>(self, _: i128) -> Result<Value, E> {
        Err(E::custom("a whole number iosurvey cannot hold"))
    }

    fn visit_u128<E: de::Error>(self, _: u128) -> Result<Value, E> {
        Err(E::custom("a whole number iosurvey cannot hold"))
    }

    fn visit_f64<E: de::Error>(self, x: f64) -> Result<Value, E> {
        Ok(Value::Float(x))
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(v) = seq.next_element::<Value>()? {
            items.push(v);
        }
        Ok(Value::List(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let date = map.next_key::<String>()?.is_some_and(|k| k == DATE_KEY);
        Err(de::Error::custom(if date { "a date, which no setting is" } else { "a table, which no setting is" }))
    }
}

impl<'de> Deserialize<'de> for HookForm {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<HookForm, D::Error> {
        d.deserialize_any(HookVisitor)
    }
}

/// A hook's table, or any other value for the reader to judge as its command.
struct HookVisitor;

impl<'de> Visitor<'de> for HookVisitor {
    type Value = HookForm;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a command, or a table of command, on and on-failure")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<HookForm, A::Error> {
        HookTable::deserialize(de::value::MapAccessDeserializer::new(map)).map(HookForm::Table)
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<HookForm, E> {
        ValueVisitor.visit_str(s).map(HookForm::Command)
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<HookForm, E> {
        ValueVisitor.visit_i64(n).map(HookForm::Command)
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<HookForm, E> {
        ValueVisitor.visit_u64(n).map(HookForm::Command)
    }

    fn visit_f64<E: de::Error>(self, x: f64) -> Result<HookForm, E> {
        ValueVisitor.visit_f64(x).map(HookForm::Command)
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<HookForm, E> {
        ValueVisitor.visit_bool(b).map(HookForm::Command)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<HookForm, A::Error> {
        ValueVisitor.visit_seq(seq).map(HookForm::Command)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_keys_the_reader_suggests_are_those_serde_reads() {
        assert_eq!(keys_at(&[]), Some(&["campaign", "target", "study", "cache", "hooks", "event", "batch"][..]));
        assert_eq!(keys_at(&["cache".into()]), Some(&["drop-caches", "direct", "reorder", "data", "data-rule"][..]));
        assert_eq!(keys_at(&["hooks".into(), "before-run".into()]), Some(&["command", "on", "on-failure"][..]));
        assert_eq!(keys_at(&["study".into()]), None, "a study's keys are its kind's");
    }
}
