"""The grounding lexicon: which words change what a sentence asserts, and which say the same thing.

Why a list of its own: the verifier compares what an answer sentence says with what its source
says, and a handful of closed-class words carry most of the difference between the two ("may"
against "must", "some" against "all", "at least" against "up to", "enabled" against "disabled").
They are few and known, so they are listed here rather than learned; open-class words are compared
by their roots (`roots.py`) and the synonym groups below.
"""

from __future__ import annotations

#: Modal strength of a predicate. A claim may not say more than its source: POSSIBLE < ADVISED <
#: REQUIRED; a plain statement ("files are compressed") asserts the fact, so it is stronger than
#: POSSIBLE or ADVISED and equal to REQUIRED or FUTURE (a rule stated as what happens).
POSSIBLE, ADVISED, REQUIRED, FUTURE = "may", "should", "must", "will"

MODALS: dict[str, str] = {
    "may": POSSIBLE, "might": POSSIBLE, "can": POSSIBLE, "could": POSSIBLE,
    "should": ADVISED, "ought": ADVISED,
    "must": REQUIRED, "shall": REQUIRED,
    "will": FUTURE, "would": POSSIBLE,
}

#: Words that state a modality lexically: "is required to", "is optional", "it is recommended".
MODAL_WORDS: dict[str, str] = {
    "require": REQUIRED, "mandatory": REQUIRED, "obligatory": REQUIRED, "compulsory": REQUIRED,
    "necessary": REQUIRED, "oblige": REQUIRED, "need": REQUIRED,
    "recommend": ADVISED, "advisable": ADVISED, "encourage": ADVISED, "suggest": ADVISED,
    "optional": POSSIBLE, "optionally": POSSIBLE, "allow": POSSIBLE, "permit": POSSIBLE,
    "possible": POSSIBLE, "possibly": POSSIBLE, "able": POSSIBLE, "eligible": POSSIBLE,
    "perhaps": POSSIBLE, "maybe": POSSIBLE, "potentially": POSSIBLE, "likely": POSSIBLE,
    "typically": POSSIBLE,
}

#: Adverbs that advise rather than state: "important data are best stored on a read-only filesystem".
MODAL_ADVERBS: dict[str, str] = {"best": ADVISED, "preferably": ADVISED, "ideally": ADVISED}

#: Scope words that make a statement universal or exclusive ...
UNIVERSAL = frozenset("all every each always never any entire entirely whole completely fully invariably "
                      "none nobody nothing exclusively solely only ever unconditionally regardless "
                      "absolutely universally".split())
#: ... and those that make it partial, usual or conditional.
PARTIAL = frozenset("some many most several few often usually typically generally sometimes normally "
                    "default mostly frequently commonly occasionally certain various partly partially "
                    "majority part".split())
#: Words that make a statement exclusive; a claim's "only" needs one of these in its source.
EXCLUSIVE = frozenset("only solely exclusively sole alone just unique except but other unless".split())

#: Comparators written before a number: "at least 3" (>=), "up to 3" (<=), "more than 3" (>),
#: "fewer than 3" (<), "exactly 3" (=). Longest phrases first.
COMPARATORS: tuple[tuple[str, str], ...] = (
    ("no less than", ">="), ("not less than", ">="), ("no fewer than", ">="), ("at least", ">="),
    ("a minimum of", ">="), ("minimum of", ">="), ("minimum", ">="), ("or more", ">="), ("or longer", ">="),
    ("no more than", "<="), ("not more than", "<="), ("at most", "<="), ("up to", "<="),
    ("a maximum of", "<="), ("maximum of", "<="), ("maximum", "<="), ("not exceed", "<="),
    ("not to exceed", "<="), ("or less", "<="), ("or fewer", "<="), ("within", "<="), ("max", "<="),
    ("more than", ">"), ("longer than", ">"), ("greater than", ">"), ("over", ">"), ("exceeding", ">"),
    ("above", ">"), ("beyond", ">"), ("in excess of", ">"), ("exceeds", ">"), ("exceed", ">"),
    ("less than", "<"), ("fewer than", "<"), ("shorter than", "<"), ("under", "<"), ("below", "<"),
    ("exactly", "=="), ("precisely", "=="),
)

#: Conjunctions that make a clause a condition of its head: dropping one changes what is asserted.
CONDITIONS = frozenset("if unless provided providing when whenever once where except until".split())

#: Words that link a clause to another as its reason, result, condition or time: a claim that links
#: two facts needs its source to link them too.
LINKS = frozenset("because since so therefore thus hence if unless when whenever once until before after "
                  "while whereas although though".split())
#: Of those, the ones that state a reason or a result.
CAUSAL = frozenset("because since so therefore thus hence why".split())

#: Verbs that deny their object by themselves: "omits X" says "does not include X".
PRIVATIVE = frozenset(["lack", "omit", "exclude", "miss", "leave out", "skip", "drop", "forgo", "forego",
                       "lose", "ignore"])

#: Verbs and adjectives that negate the verb after their "to" ("fails to start", "unable to connect").
NEGATING_HEADS = frozenset("fail unable refuse cease decline neglect".split())

#: Pairs whose members contradict each other; each side's roots (`roots.root`) are listed.
ANTONYMS: tuple[tuple[str, str], ...] = tuple((a, b) for a, b in (p.split("/") for p in """
enable/disable enabled/disabled allow/forbid allow/prohibit allow/prevent permit/forbid permit/prohibit
accept/reject include/exclude inclusive/exclusive before/after earlier/later early/late first/last
increase/decrease increase/reduce raise/lower maximum/minimum max/min more/less more/fewer higher/lower
high/low above/below upper/lower larger/smaller large/small longer/shorter long/short greater/smaller
open/close opened/closed start/stop begin/end start/end success/failure succeed/fail valid/invalid
true/false same/different same/another internal/external public/private synchronous/asynchronous
encrypted/unencrypted encrypt/decrypt supported/unsupported available/unavailable possible/impossible
required/optional mandatory/optional necessary/unnecessary compatible/incompatible secure/insecure
paid/unpaid full/partial fully/partially online/offline inbound/outbound input/output import/export
add/remove insert/delete create/delete connect/disconnect lock/unlock grant/revoke grant/deny
approve/reject approve/deny win/lose buyer/seller lender/borrower employer/employee sender/receiver
client/server send/receive upload/download ascending/descending minimum/maximum hot/cold
active/inactive visible/hidden present/absent old/new oldest/newest older/newer ahead/behind
inside/outside within/outside permanent/temporary permanently/temporarily always/never all/none
with/without fast/slow quick/slow cheap/expensive easy/hard easy/difficult safe/unsafe strong/weak
good/bad better/worse best/worst survive/lose persist/lose
""".split()))

#: Words of the same meaning in the documents people ask about, as written; compared by root
#: (`roots.root`), so one form of each word is enough.
SYNONYMS: tuple[tuple[str, ...], ...] = tuple(tuple(g.split(",")) for g in """
employee,staff,worker,personnel
require,need,mandate,oblige,necessary,mandatory
approve,authorize,authorise,sanction,endorse,consent
start,begin,commence,initiate,launch
end,finish,terminate,conclude,expire,cease
buy,purchase,acquire,acquisition
buyer,purchaser,acquirer
seller,vendor
company,firm,corporation,business,organization,organisation
price,cost,fee,amount,sum,consideration
allow,permit,let,enable
forbid,prohibit,ban,disallow
use,utilize,utilise,employ
show,display,present
send,transmit,deliver,dispatch
receive,get,obtain
maximum,max,limit,cap,ceiling
minimum,min,floor
large,big,great
small,little,minor
fast,quick,rapid,quickly,rapidly
error,failure,fault,problem,issue
fix,repair,resolve,correct
help,assist,aid
make,create,build,generate,produce,manufacture,manufacturer,maker
delete,remove,erase,drop
change,modify,alter,adjust,update
check,verify,validate,confirm,ensure
mean,define,denote
contain,include,hold,comprise
keep,retain,preserve,store,maintain
stay,remain,persist,last,continue
force,effect,effective
period,term,duration,length
year,annual,yearly,annually,annum
leave,absence
pay,salary,wage,compensation,remuneration
sick,ill,illness,sickness
notice,notification,notify
sign,execute
agreement,contract
breach,violate,contravene,infringe
licence,license
find,identify,discover,detect
sue,lawsuit,litigation,litigate
defence,defense
offence,offense
party,signatory
document,file,record
run,execute,operate,invoke
fail,crash
connect,link
message,packet,datagram
user,person,people,individual
reach,attain,achieve
wait,pause,delay
return,yield
raise,throw
call,invoke
argument,parameter,arg,param
directory,folder
install,setup
entitle,eligible,receive,get,accrue,earn
grant,give,award,provide
put,insert,place,add
fall,drop,decrease,decline,reduce
small,minimum,low
large,maximum,high
""".split())

#: Qualifiers that pick one of a kind without naming another kind: "the sole advertised value" is
#: not a rival of "the max_idle_timeout value" the way "the marshal format" is of "the pickle format".
PLAIN_QUALIFIERS = frozenset("sole single same other own certain particular various specific given respective "
                             "entire whole first last next previous following above below".split())

#: Words that frame a sentence without saying anything about the documents' subject: a claim may
#: add them ("According to the policy, ...", "The document states that ...").
FRAMING = frozenset("""
accord document passage source text section state say mention specify note indicate describe
explain provide confirm report also however therefore thus addition additionally furthermore moreover overall
generally basically actually simply specifically particular particularly example instance
follow following answer question yes no per conclude certify attest affirm declare
""".split())
