"""English renderings of the Chinese-language seed quotes that rule citations carry.

The decision rules cite the two seed articles ([S1], [S2]; docs/reference/README.md) by quoting
them in the original. Reports print each quote with an English rendering beside it, in brackets,
so a reader without Chinese can check the rule against its source. The renderings are fabricplan's
own translations. A test runs every rule and fails if a citation carries a Chinese quote with no
rendering here, so a changed or new quote cannot ship untranslated.
"""

from __future__ import annotations

import re

# Quote (as the rule cites it) -> English rendering.
QUOTE_EN: dict[str, str] = {
    "单节点8卡以下…优先选择RoCE": "clusters of up to one 8-GPU node ... prefer RoCE",
    "对于百卡以下规模的训练集群，RoCE的TCO优势明显":
        "for training clusters below about a hundred GPUs, RoCE's TCO advantage is clear",
    "超过256卡…建议采用InfiniBand，尤其当…频繁的all-reduce同步或使用SHARP":
        "above 256 GPUs ... InfiniBand is recommended, especially when ... frequent all-reduce "
        "synchronisation or SHARP is used",
    "超过五百卡时，InfiniBand的运维效率和性能稳定性带来的隐性收益通常能够抵消硬件成本差距":
        "above five hundred GPUs, the hidden benefits of InfiniBand's operational efficiency and stable "
        "performance usually offset the hardware cost gap",
    "延迟敏感的训练任务…InfiniBand的确定性延迟表现更可靠":
        "for latency-sensitive training jobs ... InfiniBand's deterministic latency is more reliable",
    "对于推理或中小模型训练，RoCE的性能已足够":
        "for inference or small and medium model training, RoCE's performance is sufficient",
    "先确定未来 12 到 24 个月的主要任务类型": "first settle the main task types of the next 12 to 24 months",
    "已在大规模以太网上积累深厚…RoCE 往往是更平衡的路线":
        "with deep experience running large Ethernet networks ... RoCE is often the more balanced route",
    "任何一端的配置不一致…RDMA直接断开连接…训练任务中断":
        "a configuration mismatch at either end ... RDMA connections drop ... the training job stops",
    "运维成熟度": "operations maturity",
    "团队也不打算做精细网络调优…传统以太网可能已经足够":
        "the team does not plan fine network tuning either ... traditional Ethernet may be enough",
    "任务通信模式": "the jobs' communication pattern",
    "只有当任务本身高度依赖跨节点同步时，网络投入才更容易转化为训练提速":
        "only when the jobs depend heavily on cross-node synchronisation does network spending readily "
        "turn into faster training",
    "平台调度能力": "the platform's scheduling capability",
    "调度器无法感知…节点拓扑…任务仍然可能被放到错误的位置":
        "the scheduler cannot see ... the node topology ... jobs may still be placed in the wrong spot",
    "误判一": "misjudgement 1",
    "只看理论带宽，不看实际瓶颈": "looking only at theoretical bandwidth, not at the real bottleneck",
    "误判二": "misjudgement 2",
    "把'现网兼容'当成唯一优势": "treating 'compatible with the existing network' as the only advantage",
    "误判三": "misjudgement 3",
    "把 InfiniBand 当成默认标准答案": "treating InfiniBand as the default standard answer",
}

# A run of text holding at least one CJK character, with the punctuation and Latin words inside it:
# the quote as cited, from its first to its last CJK character or CJK punctuation mark.
_CJK = "\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef"
_QUOTE = re.compile(rf"[{_CJK}](?:[{_CJK}A-Za-z0-9 '…\-]*[{_CJK}A-Za-z0-9])?")


def cjk_runs(text: str) -> list[tuple[str, bool]]:
    """`text` split into its runs of Chinese text (as `_QUOTE` finds them) and the text between
    them, in order: (run, is Chinese). The HTML pages mark the Chinese runs with their language."""
    out: list[tuple[str, bool]] = []
    at = 0
    for match in _QUOTE.finditer(text):
        if not has_cjk(match.group(0)):
            continue
        if match.start() > at:
            out.append((text[at:match.start()], False))
        out.append((match.group(0), True))
        at = match.end()
    if at < len(text) or not out:
        out.append((text[at:], False))
    return out


def has_cjk(text: str) -> bool:
    return re.search(f"[{_CJK}]", text) is not None


def quotes_in(citation: str) -> list[str]:
    """The quotes of a citation that carry Chinese text, longest first, as `QUOTE_EN` keys match them."""
    found = [quote for quote in QUOTE_EN if quote in citation]
    return sorted(found, key=len, reverse=True)


def untranslated(citation: str) -> list[str]:
    """Chinese text in `citation` that no known quote covers (empty when every quote has a rendering)."""
    rest = citation
    for quote in quotes_in(citation):
        rest = rest.replace(quote, " ")
    return [match.group(0) for match in _QUOTE.finditer(rest) if has_cjk(match.group(0))]


def with_english(citation: str) -> str:
    """`citation` with each known Chinese quote followed by its English rendering in brackets:
    "... 运维成熟度 [operations maturity] ..."."""
    if not has_cjk(citation):
        return citation
    out = citation
    placeholders: dict[str, str] = {}
    for number, quote in enumerate(quotes_in(citation)):
        token = f"\x00{number}\x00"
        placeholders[token] = f"{quote} [{QUOTE_EN[quote]}]"
        out = out.replace(quote, token)
    for token, text in placeholders.items():
        out = out.replace(token, text)
    return out
