//! Examples the claim check must get right (issue 18), with exact reports.

use crate::claims::{check_claims, ClaimReport};
use crate::facts::Kind;

fn check(answer: &str, blocks: &[&str]) -> Vec<ClaimReport> {
    check_claims(answer, blocks, 12).unwrap()
}

/// `(kind, text, found)` of each fact of the last sentence.
fn facts(answer: &str, blocks: &[&str]) -> Vec<(Kind, String, bool)> {
    check(answer, blocks)
        .last()
        .expect("a sentence")
        .facts
        .iter()
        .map(|f| (f.kind, f.text.clone(), f.found))
        .collect()
}

#[test]
fn yes_against_doesnt_handle_is_a_mismatch() {
    let block = "ASN.1 support. This version doesn't handle the REAL type.";
    let r = &check("Yes, libtasn1 handles the REAL type [1].", &[block])[0];
    let p = r.polarity.as_ref().expect("compared");
    assert!(!p.answer_negated && p.evidence_negated);
    assert_eq!(
        &block[p.start..p.end],
        "This version doesn't handle the REAL type."
    );
    assert!(!r.supported);
    // The same claim, negated, is fine.
    let r = &check("No, it does not handle the REAL type [1].", &[block])[0];
    assert!(r.supported, "{r:?}");
}

#[test]
fn must_not_against_must_not_is_fine() {
    let block = "An endpoint MUST NOT send a PING frame in this state.";
    let r = &check("The endpoint MUST NOT send it [1].", &[block])[0];
    assert!(r.supported, "{r:?}");
    assert!(r
        .polarity
        .as_ref()
        .is_some_and(|p| p.answer_negated && p.evidence_negated));
}

#[test]
fn invented_numbers_are_not_found() {
    let nda = "IN WITNESS WHEREOF, the parties have executed this Agreement as of the date first written above. TechCorp Inc. By: ____ Name: Sarah Chen Title: Chief Executive Officer";
    let f = facts(
        "The annual salary of TechCorp's CEO James Mitchell is $415,550. [1]",
        &[nda],
    );
    assert!(
        f.contains(&(Kind::Number, "$415,550".into(), false)),
        "{f:?}"
    );
    assert!(f.contains(&(Kind::Name, "TechCorp".into(), true)), "{f:?}");
    assert!(f.contains(&(Kind::Name, "Mitchell".into(), false)), "{f:?}");
    let quic = "The two least significant bits of a stream ID identify the initiator.";
    let r = &check("It is 5432 [1].", &[quic])[0];
    assert_eq!(r.facts.len(), 1);
    assert!(!r.facts[0].found && !r.supported);
}

#[test]
fn paraphrased_numbers_are_found() {
    let rfc = "If this parameter is absent, a default value of 3 is assumed (indicating a multiplier of 8).";
    let r = &check("A default of 3 is assumed [1].", &[rfc])[0];
    assert!(r.supported, "{r:?}");
    let r = &check(
        "The fee is $45 million [1].",
        &["a fee of USD 45,000,000 payable"],
    )[0];
    assert!(r.supported, "{r:?}");
    assert_eq!(r.facts[0].text, "$45 million");
    let r = &check(
        "Leave is 12% [1] of 3 weeks.",
        &["twelve percent (12 percent) of three weeks"],
    )[0];
    assert!(r.supported, "{r:?}");
}

#[test]
fn dates_identifiers_quotes_and_names() {
    let block = "Entered into as of October 1, 2024 by northwind_leave_policy.pdf; set ack_delay_exponent to 3 over TLS1.3 (`max_idle_timeout`). It says \"use v1.2.3\".";
    let answer = "As of 2024-10-01, Northwind sets `max_idle_timeout` and ack_delay_exponent over TLS1.3 via \"v1.2.3\" [1].";
    let f = facts(answer, &[block]);
    let kinds: Vec<_> = f
        .iter()
        .map(|(k, t, found)| (*k, t.as_str(), *found))
        .collect();
    assert_eq!(
        kinds,
        [
            (Kind::Date, "2024-10-01", true),
            (Kind::Name, "Northwind", true),
            (Kind::Code, "max_idle_timeout", true),
            (Kind::Identifier, "ack_delay_exponent", true),
            (Kind::Identifier, "TLS1.3", true),
            (Kind::Quote, "v1.2.3", true),
        ]
    );
    let f = facts("Signed on 2 October 2024 by Sarah Chen [1].", &[block]);
    assert_eq!(f[0], (Kind::Date, "2 October 2024".into(), false));
    assert_eq!(f[1], (Kind::Name, "Sarah".into(), false));
}

#[test]
fn unchecked_sentences_and_offsets() {
    let reports = check(
        "Uncited claim of 99. Cites [7]. Real [2] and 5 [1].",
        &["5", "x"],
    );
    assert_eq!(reports.len(), 3);
    assert!(reports[0].facts.is_empty() && reports[0].supported && reports[0].blocks.is_empty());
    assert!(reports[1].facts.is_empty() && reports[1].blocks.is_empty());
    let r = &reports[2];
    assert_eq!(r.blocks, [2, 1]);
    assert_eq!(
        (r.facts[0].start, r.facts[0].end, r.facts[0].cited.clone()),
        (45, 46, vec![1])
    );
    assert!(check_claims("x", &["y"], 0).is_err());
}

#[test]
fn list_markers_and_sentence_starts_are_not_facts() {
    // "1." ends a sentence of its own (the splitter's rule 3); "a)" is blanked.
    // A sentence-initial word is a name only when marked as one.
    let f = facts(
        "1. Carry Over applies: Northwind is allowed [1].",
        &["Northwind leave"],
    );
    assert_eq!(
        f,
        [
            (Kind::Name, "Carry".into(), false),
            (Kind::Name, "Over".into(), false)
        ]
    );
    let f = facts(
        "Intro [1].\na) Carry over applies to Northwind [1].",
        &["Northwind leave"],
    );
    assert_eq!(f, [(Kind::Name, "Northwind".into(), true)]);
    let f = facts("Northwind Leave and Hooli's [1].", &["Northwind leave"]);
    assert_eq!(
        f,
        [
            (Kind::Name, "Northwind".into(), true),
            (Kind::Name, "Leave".into(), true),
            (Kind::Name, "Hooli".into(), false)
        ]
    );
    let f = facts("Hooli's plan [1].", &["x"]);
    assert_eq!(f, [(Kind::Name, "Hooli".into(), false)]);
    let f = facts(
        "- (a) Yes, Contoso Ltd. is [1] mentioned.",
        &["nothing here"],
    );
    assert_eq!(
        f,
        [
            (Kind::Name, "Contoso".into(), false),
            (Kind::Name, "Ltd".into(), false)
        ]
    );
}

#[test]
fn hyphenation_and_soft_hyphens_are_joined() {
    let block = "the trans-\nport parameter ack\u{ad}_delay is Well-\nKnown";
    let f = facts(
        "The Transport and ack_delay are not Wellknown [1].",
        &[block],
    );
    assert_eq!(
        f,
        [
            (Kind::Name, "Transport".into(), true),
            (Kind::Identifier, "ack_delay".into(), true),
            (Kind::Name, "Wellknown".into(), false),
        ]
    );
}
