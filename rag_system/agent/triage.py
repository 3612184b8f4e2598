"""Triage: answer smalltalk and questions about the assistant without retrieval.

Why: "hello" or "who are you?" should not search the user's documents and
return a refusal. But a false positive is worse than a false negative — a
document question answered with a canned greeting is lost — so the rules are
conservative: the WHOLE normalised message must match an anchored pattern and
have at most six words. There is no substring matching, so "which", "this",
"machine", "hist" or "hi, what does section 4 say?" always retrieve.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

Route = Literal["direct", "retrieve"]
Kind = Literal["greeting", "thanks", "farewell", "acknowledgement", "about_assistant",
               "capabilities", "empty"]

MAX_DIRECT_WORDS = 6

_EMOJI_WORDS = {"👋": " hi ", "🙏": " thanks ", "👍": " ok ", "🙂": " ", "😊": " ", "😀": " "}

_VOC = (r"(?:\s+(?:there|all|everyone|everybody|folks|guys|team|friend|buddy|mate|docent|bot|"
        r"assistant|again|then|so much|very much|a lot))*")
_GREET = (r"(?:hi|hii+|hello|helo|hallo|hullo|hey|heya|hiya|howdy|yo|greetings|good (?:morning|afternoon|"
          r"evening|day)|morning|evening|bonjour|hola|salut|ciao|namaste|hej|hei|moin|sup|wassup|whats up)")
_HOW = (r"(?:how are you(?: doing)?(?: today)?|how are things|hows it going|how is it going|how do you do|"
        r"nice to meet you|pleased to meet you|good to see you|long time no see|are you there|you there|"
        r"anyone there|anybody there)")
_G = rf"(?:{_GREET}|{_HOW}){_VOC}"
_ACK = (r"(?:ok|okay|k|kk|cool|great|nice|good|fine|sure|alright|all right|awesome|perfect|brilliant|"
        r"excellent|wonderful|super|got it|i see|understood|noted|sounds good|makes sense|that helps|"
        r"that helped|very helpful|helpful|that was helpful|yes|yeah|yep|no|nope|no thanks|"
        r"ok cool|ok great|ok got it|great stuff)")
_THANKS = (r"(?:thanks|thank you|thank u|thankyou|thx|thanx|ty|tysm|cheers|many thanks|much appreciated|"
           r"appreciate it|i appreciate it|appreciated|merci|danke|gracias|thanks a bunch|thanks a ton)")
_FOR = r"(?:\s+for (?:the|your|all the|all your) (?:help|answer|answers|info|information|explanation|reply))?"
_BYE = (r"(?:bye|bye bye|byebye|goodbye|good bye|see you|see ya|see you later|see you soon|later|cya|"
        r"good night|goodnight|take care|farewell|have a (?:nice|good|great) (?:day|evening|night|weekend)|"
        r"thats all|that is all|thats it|im done|i am done|done for today|signing off|gotta go)")
_ABOUT = (r"(?:(?:who|what) are you(?: exactly| really)?|who am i (?:talking|speaking|chatting) (?:to|with)|"
          r"whats your name|what is your name|do you have a name|your name|"
          r"who (?:made|built|created|developed|trained|wrote) you|"
          r"are you (?:a |an )?(?:bot|robot|human|person|real|ai|chatbot|chatgpt|gpt|llm|language model|"
          r"alive|sentient|online|offline|local|private|free)|"
          r"(?:what|who) is docent|whats docent|tell me about yourself|introduce yourself|describe yourself|"
          r"(?:what|which) (?:model|llm) are you(?: using)?|(?:what|which) (?:model|llm) do you use|"
          r"do you (?:use|need) the internet|are you connected to the internet|is my data (?:safe|private)|"
          r"how do you work)")
_CAN = (r"(?:what can you do|what do you do|what can i ask(?: you)?|what should i ask(?: you)?|"
        r"what questions can i ask|how can you help(?: me)?|can you help(?: me)?|help|help me|i need help|"
        r"how do i use (?:you|this|docent)|what are your (?:capabilities|features|skills|abilities)|"
        r"what are you (?:able to do|capable of|good at|for)|what do you know|what can docent do|"
        r"what does docent do)")
_PLEASE = r"(?:\s+please)?"

_RULES: tuple[tuple[Kind, re.Pattern[str]], ...] = (
    ("greeting", re.compile(rf"{_G}(?:\s+{_G})*")),
    ("thanks", re.compile(rf"(?:{_G}\s+)?(?:{_ACK}\s+)?{_THANKS}(?:\s+{_THANKS})?{_VOC}{_FOR}{_VOC}(?:\s+{_ACK})?(?:\s+{_BYE})?")),
    ("farewell", re.compile(rf"(?:(?:{_ACK}|{_THANKS})\s+)?{_BYE}{_VOC}")),
    ("acknowledgement", re.compile(rf"{_ACK}(?:\s+{_ACK})?{_VOC}")),
    ("about_assistant", re.compile(rf"(?:{_G}\s+)*(?:so\s+)?{_ABOUT}{_VOC}{_PLEASE}")),
    ("capabilities", re.compile(rf"(?:{_G}\s+)*(?:so\s+)?(?:please\s+)?{_CAN}{_VOC}{_PLEASE}")),
)


@dataclass(frozen=True)
class TriageDecision:
    """Where a message goes: `direct` (canned reply, no retrieval) or `retrieve`."""

    route: Route
    kind: Kind | None
    reason: str


def normalize_message(message: str) -> str:
    """Lower-case words only: emoji mapped or dropped, apostrophes removed, punctuation to spaces."""
    text = unicodedata.normalize("NFKC", message or "")
    for emoji, word in _EMOJI_WORDS.items():
        text = text.replace(emoji, word)
    text = text.lower().replace("\u2019", "'").replace("'", "")
    text = re.sub(r"[^\w\s]|_", " ", text)
    return " ".join(text.split())


def triage(message: str) -> TriageDecision:
    """Classify one whole message; anything not clearly smalltalk retrieves."""
    norm = normalize_message(message)
    if not norm:
        return TriageDecision("direct", "empty", "no words in the message")
    count = len(norm.split())
    if count > MAX_DIRECT_WORDS:
        return TriageDecision("retrieve", None, f"{count} words: longer than smalltalk")
    for kind, pattern in _RULES:
        if pattern.fullmatch(norm):
            return TriageDecision("direct", kind, f"whole message is {kind.replace('_', ' ')}")
    return TriageDecision("retrieve", None, "not smalltalk: search the documents")


_ABOUT_REPLY = ("I'm Docent, a private document assistant. I answer questions from your own documents, "
                "cite the document and page behind every claim (and check those citations), and say so "
                "when your documents don't cover a question. I run entirely offline on this machine.")
_REPLIES: dict[Kind, str] = {
    "greeting": "Hello! I'm Docent. Ask me anything about your documents and I'll answer from them, "
                "with page citations.",
    "thanks": "You're welcome! Ask me anything else about your documents.",
    "farewell": "Goodbye! Your documents and this conversation stay on this machine.",
    "acknowledgement": "Anything else you'd like to know from your documents?",
    "about_assistant": _ABOUT_REPLY,
    "capabilities": "I answer questions about the documents in your linked indexes: facts, summaries, "
                    "comparisons, where something is stated. Every answer cites the document and page it "
                    "comes from, and I tell you when the documents don't cover a question. "
                    "I run offline on this machine.",
    "empty": "Ask me a question about your documents.",
}


def direct_reply(decision: TriageDecision) -> str:
    """The canned reply for a `direct` decision; a `retrieve` one has none."""
    if decision.route != "direct" or decision.kind is None:
        raise ValueError("direct_reply needs a direct decision; this message must retrieve")
    return _REPLIES[decision.kind]


@dataclass(frozen=True)
class RouteDecision:
    """Whether a chat message searches the documents (`rag`) or is answered directly, and why.

    `reason` is one of `task:<name>`, `force_rag`, `filters`, `no_index`, `smalltalk:<kind>`,
    `document_question`; the RAG API reports it with the answer (`route_reason`) and the gateway
    stores it, so the decision is made once, here.
    """

    route: Literal["rag", "direct"]
    reason: str
    kind: Kind | None = None  # the smalltalk kind, when the message is smalltalk


def route_message(message: str, *, has_index: bool, force_rag: bool = False, has_filters: bool = False,
         task: str | None = None) -> RouteDecision:
    """The routing of one chat message (pure).

    A task (summary, comparison, auto), `force_rag` or a filter always searches; without an index
    there is nothing to search; smalltalk and questions about the assistant are answered directly;
    everything else searches.
    """
    decision = triage(message)
    kind = decision.kind if decision.route == "direct" else None
    if task not in (None, "qa"):
        return RouteDecision("rag", f"task:{task}", kind)
    if force_rag:
        return RouteDecision("rag", "force_rag", kind)
    if has_filters:
        return RouteDecision("rag", "filters", kind)
    if not has_index:
        return RouteDecision("direct", "no_index", kind)
    if kind is not None:
        return RouteDecision("direct", f"smalltalk:{kind}", kind)
    return RouteDecision("rag", "document_question")
