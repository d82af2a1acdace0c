"""DCQCN analysis: fixed point, linearised stability and convergence-time bound.

The model is the per-flow DCQCN fluid model of Zhu et al., "ECN or Delay: Lessons Learnt from
Analysis of DCQCN and TIMELY" (CoNEXT'16), section 4 (figure "DCQCN fluid model"; the text and the
MATLAB models are in jitupadhye-zz/rdma, conext2016/*.tex and fluidmodel/dcqcn/*.m). Rates and
queues are counted in packets of ``packet_bytes`` (1 KB in the paper), times in seconds. Symbols:

* ``C`` link rate, ``N`` flows, ``R_C``/``R_T`` current/target rate, ``alpha`` the RP's estimate;
* ``tau`` CNP interval (50 us), ``tau'`` alpha interval (55 us), ``T`` rate timer (55 us),
  ``B`` byte counter (10 MB), ``F`` fast-recovery steps (5), ``R_AI`` additive step (40 Mb/s),
  ``g`` alpha gain (1/256), RED marking ``Kmin``/``Kmax``/``Pmax``; ``tau*`` the control-loop delay.

Every default comes from ``perf_defaults`` (``dcqcn_*``), each with its source.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace

from fabricplan.errors import InputError
from fabricplan.units import format_span

#: Program limits (not physical defaults): the search range of the gain-crossover frequency, rad/s.
_OMEGA_MIN = 1e-1
_OMEGA_MAX = 1e9
_OMEGA_POINTS = 20_000
#: Program limits (not physical defaults): the range of each parameter the analysis accepts, in
#: the units of its flag, and whether it is a whole count. Wide of any NIC or switch setting
#: (ConnectX timers and intervals reach ~0.1 s, byte counters a few MB, shared buffers ~100 MB,
#: link rates 1.6 Tb/s) yet narrow enough that no term of the model over- or underflows a float.
PARAMETER_LIMITS: dict[str, tuple[float, float, str, bool]] = {
    "rai_mbps": (0.001, 10_000_000.0, "Mb/s", False),
    "rhai_mbps": (0.001, 10_000_000.0, "Mb/s", False),
    "kmin_kb": (0.0, 10_000_000.0, "KB", False),
    "kmax_kb": (0.001, 10_000_000.0, "KB", False),
    "pmax": (1e-6, 1.0, "", False),
    "g": (1e-6, 0.999, "", False),
    "cnp_interval_us": (0.01, 100_000.0, "us", False),
    "alpha_interval_us": (0.01, 100_000.0, "us", False),
    "rate_timer_us": (0.01, 100_000.0, "us", False),
    "byte_counter_bytes": (1.0, 10_000_000_000.0, "bytes", False),
    "fast_recovery_steps": (1.0, 1_000.0, "steps", True),
    "min_rate_mbps": (0.0, 10_000_000.0, "Mb/s", False),
    "packet_bytes": (64.0, 1_000_000.0, "bytes", True),
}
#: Program limits: flows on one bottleneck (an incast of a million senders is beyond any
#: cluster's NICs on one port) and the control-loop delay (1 s; data-centre loops are ~10 us).
MAX_FLOWS = 1_000_000
MAX_DELAY_US = 1_000_000.0


@dataclass(frozen=True)
class DcqcnParams:
    """The DCQCN parameters (RP, NP and CP) in the units operators set them."""

    rai_mbps: float
    rhai_mbps: float
    kmin_kb: float
    kmax_kb: float
    pmax: float
    g: float
    cnp_interval_us: float
    alpha_interval_us: float
    rate_timer_us: float
    byte_counter_bytes: float
    fast_recovery_steps: float
    min_rate_mbps: float
    packet_bytes: float

    def with_values(self, **values: float | None) -> DcqcnParams:
        """A copy with the given fields changed (``None`` keeps the current value)."""
        return replace(self, **{k: float(v) for k, v in values.items() if v is not None})

    def check(self, where: Callable[[str], str] | None = None) -> DcqcnParams:
        """InputError naming the first out-of-range field and its accepted range
        (:data:`PARAMETER_LIMITS`); the parameters otherwise. ``where`` names a field (default: its
        CLI flag; the catalog's values are named by their overlay file and entry)."""
        where = where or _flag
        for name, value in asdict(self).items():
            low, high, unit, whole = PARAMETER_LIMITS[name]
            if not (math.isfinite(value) and low <= value <= high) or (whole and value != int(value)):
                kind = "a whole number" if whole else "a number"
                raise InputError(f"must be {kind} in {format_span(low, high, unit)}, got {value:g}", location=where(name))
        if self.kmax_kb <= self.kmin_kb:
            raise InputError(f"must be greater than Kmin ({self.kmin_kb:g} KB), got {self.kmax_kb:g}",
                             location=where("kmax_kb"))
        return self


def _flag(field: str) -> str:
    """The `fabricplan dcqcn` flag that sets a DcqcnParams field."""
    return {"fast_recovery_steps": "--fast-recovery", "packet_bytes": "perf_defaults.dcqcn_model_packet_bytes",
            "rhai_mbps": "perf_defaults.dcqcn_rhai_mbps",
            "min_rate_mbps": "perf_defaults.dcqcn_min_rate_mbps"}.get(field, "--" + field.replace("_", "-"))


_PARAM_NAMES = {"rai_mbps": "dcqcn_rai_mbps", "rhai_mbps": "dcqcn_rhai_mbps", "kmin_kb": "dcqcn_kmin_kb",
                "kmax_kb": "dcqcn_kmax_kb", "pmax": "dcqcn_pmax", "g": "dcqcn_g",
                "cnp_interval_us": "dcqcn_cnp_interval_us", "alpha_interval_us": "dcqcn_alpha_interval_us",
                "rate_timer_us": "dcqcn_rate_timer_us", "byte_counter_bytes": "dcqcn_byte_counter_bytes",
                "fast_recovery_steps": "dcqcn_fast_recovery_steps", "min_rate_mbps": "dcqcn_min_rate_mbps",
                "packet_bytes": "dcqcn_model_packet_bytes"}


def dcqcn_params(catalog, **overrides: float | None) -> DcqcnParams:
    """The catalog's DCQCN defaults (``perf_defaults.dcqcn_*``), with ``overrides`` applied and checked."""
    from fabricplan.sim.params import sim_parameter as perf_parameter

    base = DcqcnParams(**{field: perf_parameter(entry, catalog) for field, entry in _PARAM_NAMES.items()})

    def in_catalog(field: str) -> str:
        path = f"perf_defaults.parameters.{_PARAM_NAMES[field]}.value"
        return f"{catalog.origin(path)}: {path}"

    return base.check(in_catalog).with_values(**overrides).check()


def parameter_sources(catalog) -> dict[str, str]:
    """Each DCQCN field's catalog entry and its source (for reports and docs)."""
    from fabricplan.catalog.catalog import require_catalog

    params = require_catalog(catalog, "parameter_sources").perf_defaults.parameters
    return {field: f"perf_defaults.{entry}: {params[entry].source}" for field, entry in _PARAM_NAMES.items()}


@dataclass(frozen=True)
class _Units:
    """The parameters in the fluid model's units: packets, packets per second and seconds."""

    C: float
    N: int
    rai: float
    B: float
    T: float
    F: float
    tau: float
    taup: float
    g: float
    kmin: float
    kmax: float
    pmax: float

    @classmethod
    def of(cls, link_gbps: float, flows: int, p: DcqcnParams) -> _Units:
        bits = p.packet_bytes * 8.0
        return cls(C=link_gbps * 1e9 / bits, N=flows, rai=p.rai_mbps * 1e6 / bits, B=p.byte_counter_bytes / p.packet_bytes,
                   T=p.rate_timer_us * 1e-6, F=p.fast_recovery_steps, tau=p.cnp_interval_us * 1e-6,
                   taup=p.alpha_interval_us * 1e-6, g=p.g, kmin=p.kmin_kb * 1e3 / p.packet_bytes,
                   kmax=p.kmax_kb * 1e3 / p.packet_bytes, pmax=p.pmax)


def _pow1m(p: float, x: float) -> float:
    """(1 - p)^x, accurate for small p."""
    return math.exp(x * math.log1p(-p))


def _increase_term(p: float, x: float, f: float) -> float:
    """(1 - p)^(f x) p / ((1 - p)^(-x) - 1), written as p (1-p)^((f+1) x) / (1 - (1-p)^x) so that it
    neither overflows for large x nor loses precision for small p."""
    log1m = math.log1p(-p)
    return p * math.exp((f + 1.0) * x * log1m) / -math.expm1(x * log1m)


def _fixed_point_terms(p: float, rc: float, u: _Units) -> tuple[float, float, float, float, float]:
    """The a, b, c, d, e of CoNEXT'16 eq. (p_fixed) at marking probability p and rate rc."""
    a = 1.0 - _pow1m(p, u.tau * rc)
    b = _increase_term(p, u.B, 0.0)
    c = _increase_term(p, u.B, u.F)
    d = _increase_term(p, u.T * rc, 0.0)
    e = _increase_term(p, u.T * rc, u.F)
    return a, b, c, d, e


def p_star_taylor(u: _Units) -> float:
    """CoNEXT'16 eq. (fixedp): p* ~ cbrt( R_AI N^2 / (tau' C^2) * (1/B + N/(T C))^2 )."""
    return (u.rai * u.N ** 2 / (u.taup * u.C ** 2) * (1.0 / u.B + u.N / (u.T * u.C)) ** 2) ** (1.0 / 3.0)


def p_star_exact(u: _Units) -> float:
    """The root p* of a^2 alpha* / ((b+d)(c+e)) = tau^2 R_AI R_C* (CoNEXT'16 eq. p_fixed), by bisection.

    The left side grows monotonically with p (the paper's uniqueness proof), so bisection in log p
    over (1e-12, 1 - 1e-12) finds the unique root.
    """
    rc = u.C / u.N
    target = u.tau ** 2 * u.rai * rc

    def lhs(p: float) -> float:
        a, b, c, d, e = _fixed_point_terms(p, rc, u)
        alpha = 1.0 - _pow1m(p, u.taup * rc)
        return a * a * alpha / ((b + d) * (c + e))

    lo, hi = math.log(1e-12), math.log(1 - 1e-12)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if lhs(math.exp(mid)) < target:
            lo = mid
        else:
            hi = mid
    return math.exp(0.5 * (lo + hi))


@dataclass(frozen=True)
class FixedPoint:
    """The DCQCN fixed point (CoNEXT'16 section 4.2) for N flows on one bottleneck of rate C."""

    p_star: float                  # marking probability, exact root of eq. (p_fixed)
    p_star_taylor: float           # the paper's cube-root approximation
    queue_bytes: float             # q* = p*/Pmax (Kmax - Kmin) + Kmin (from the exact p*)
    queue_taylor_bytes: float      # q* from the Taylor p*
    alpha: float                   # alpha* = 1 - (1 - p*)^(tau' R_C*)
    rate_gbps: float               # R_C* = C / N
    target_rate_gbps: float        # R_T* = R_C* (1 + (c + e) tau R_AI / a)
    in_marking_range: bool         # p* <= Pmax: q* lies between Kmin and Kmax (else the queue sits at ~Kmax)


def fixed_point(link_gbps: float, flows: int, params: DcqcnParams) -> FixedPoint:
    """The fixed point of ``flows`` DCQCN flows sharing one ``link_gbps`` bottleneck.

    ``sum R_C = C`` and ``R_C* = C/N``; p* from eq. (p_fixed) (and its Taylor form eq. (fixedp));
    ``q* = p*/Pmax (Kmax-Kmin) + Kmin``; ``alpha* = 1-(1-p*)^(tau' R_C*)`` (CoNEXT'16 section 4.2).
    """
    _check_case(link_gbps, flows)
    u = _Units.of(link_gbps, flows, params)
    p_exact, p_taylor = p_star_exact(u), p_star_taylor(u)
    rc = u.C / u.N
    a, _, c, _, e = _fixed_point_terms(p_exact, rc, u)
    rt = rc * (1.0 + (c + e) * u.tau * u.rai / a)
    bits = params.packet_bytes * 8.0

    def queue(p: float) -> float:
        q = min(p / u.pmax, 1.0) * (u.kmax - u.kmin) + u.kmin
        return q * params.packet_bytes

    return FixedPoint(p_star=p_exact, p_star_taylor=p_taylor, queue_bytes=queue(p_exact),
                      queue_taylor_bytes=queue(p_taylor), alpha=1.0 - _pow1m(p_exact, u.taup * rc),
                      rate_gbps=rc * bits / 1e9, target_rate_gbps=rt * bits / 1e9,
                      in_marking_range=p_exact <= u.pmax)


def open_loop(omega, link_gbps: float, flows: int, delay_us: float, params: DcqcnParams):
    """The open-loop transfer function H(j omega) of the linearised DCQCN model (numpy array).

    Linearisation of the per-flow fluid model around the fixed point (CoNEXT'16 appendix A,
    "Deriving DCQCN characteristic equation"): with ``A = 1/B + 1/(T R_C*)``, ``h = 1/2 + A/4``,
    ``K = Pmax/(Kmax-Kmin)`` (marking slope) and the Laplace transforms of the queue
    (``s q = N R_C``), alpha and R_T equations substituted into the R_C equation, the loop is
    ``H(s) = num(s)/den(s) e^{-s tau*}`` with
    ``num = (Ns+gC)(s+p R_C)(k1 + s k2) + (s+p R_C) k4 + (Ns+gC)(s k6 + k7)`` and
    ``den = s (Ns+gC) [ (s+p R_C)(k3 - s) + k5 ]``; the coefficients k1..k7 are those the authors
    evaluate in fluidmodel/dcqcn/stability.m (the phase-margin curves of CoNEXT'16 figure 9).
    """
    import numpy as np

    s = 1j * np.asarray(omega, dtype=float)
    return _rational_loop(omega, link_gbps, flows, params) * np.exp(-s * delay_us * 1e-6)


def _rational_loop(omega, link_gbps: float, flows: int, params: DcqcnParams):
    """num(j omega)/den(j omega) of :func:`open_loop`: the loop without its delay factor."""
    import numpy as np

    _check_case(link_gbps, flows)
    u = _Units.of(link_gbps, flows, params)
    p = p_star_taylor(u)  # the authors linearise around the Taylor fixed point
    if not p < 1.0:
        raise InputError(f"{flows} flows on {link_gbps:g} Gb/s put the fixed point's marking probability at "
                         f"{p:.4g} (>= 1): outside the linearised DCQCN model", location="--flows")
    rc = u.C / u.N
    a = 1.0 - _pow1m(p, u.tau * rc)
    c = _increase_term(p, u.B, u.F)
    e = _increase_term(p, u.T * rc, u.F)
    rt = rc * (1.0 + (c + e) * u.tau * u.rai / a)
    alpha = 1.0 - _pow1m(p, u.taup * rc)
    A = 1.0 / u.B + 1.0 / (u.T * rc)
    h = 0.5 + A / 4.0
    K = u.N * u.pmax / (u.kmax - u.kmin)
    ai_tail = (1.0 + 2.0 * u.F + A / 2.0) * u.rai
    k1 = (-0.5 * rc * rc * alpha - h * rc * rt + h * rc * rc) * K
    k2 = -0.5 * p * rc * alpha - 0.5 * A * rc + h * p * rc
    k3 = k2 + 0.5 * A * rt - h * p * rt
    k4 = -0.5 * p * rc * rc * u.g * u.C * K
    w = 0.5 * A * rc - h * p * rc
    k5 = w * (p * rc + A * u.rai)
    k6 = w * (-p * rt + p * rc + A * u.rai - ai_tail * p)
    k7 = w * (-rc * rt + rc * rc - ai_tail * rc) * K

    s = 1j * np.asarray(omega, dtype=float)
    ns = u.N * s + u.g * u.C
    sp = s + p * rc
    num = ns * sp * (k1 + s * k2) + sp * k4 + ns * (s * k6 + k7)
    den = s * ns * (sp * (k3 - s) + k5)
    return num / den


def phase_margin(link_gbps: float, flows: int, delay_us: float, params: DcqcnParams) -> tuple[float, float]:
    """(phase margin in degrees, gain-crossover frequency in rad/s) of the linearised loop.

    Bode criterion (CoNEXT'16 section 4.2): at each frequency where |H(j w)| = 1 the margin is
    ``180 deg + arg H(j w)`` with the phase *unwrapped*: followed continuously from the lowest
    frequency of the grid (where the loop is a lag in (-360, 0] deg), and the delay's
    ``-w tau*`` added exactly, never folded back into +-180 deg. A pure delay leaves |H| and so the
    crossovers where they are, so the margin falls linearly (by ``w_c tau*`` in degrees) as the
    delay grows; at the paper's delays (1-100 us) this is the value MATLAB's ``margin`` reports.
    The smallest over all crossovers is returned. No crossover (|H| < 1 everywhere): 180 deg,
    frequency 0.
    """
    import numpy as np

    omega = np.logspace(math.log10(_OMEGA_MIN), math.log10(_OMEGA_MAX), _OMEGA_POINTS)
    rational = _rational_loop(omega, link_gbps, flows, params)
    gain = np.log(np.abs(rational))
    crossings = np.nonzero(np.sign(gain[:-1]) != np.sign(gain[1:]))[0]
    if crossings.size == 0:
        return 180.0, 0.0
    phase = np.unwrap(np.angle(rational))
    phase -= 2.0 * math.pi * math.ceil(phase[0] / (2.0 * math.pi))  # the low-frequency lag in (-360, 0] deg
    margins = []
    for i in crossings:
        lo, hi = math.log(omega[i]), math.log(omega[i + 1])
        glo = gain[i]
        for _ in range(60):  # bisection on log|H| in log omega (the delay does not change |H|)
            mid = 0.5 * (lo + hi)
            gm = float(np.log(np.abs(_rational_loop(math.exp(mid), link_gbps, flows, params))))
            if (gm > 0) == (glo > 0):
                lo, glo = mid, gm
            else:
                hi = mid
        wc = math.exp(0.5 * (lo + hi))
        step = float(np.angle(_rational_loop(wc, link_gbps, flows, params))) - phase[i]
        step -= 2.0 * math.pi * round(step / (2.0 * math.pi))  # the small step from the grid point to w_c
        unwrapped = phase[i] + step - wc * delay_us * 1e-6
        margins.append((180.0 + math.degrees(unwrapped), wc))
    return min(margins)


@dataclass(frozen=True)
class Convergence:
    """The discrete AIMD model of CoNEXT'16 section 4.3 at its alpha fixed point."""

    alpha_star: float          # solves alpha = (1-g)^dT ((1-g) alpha + g)
    cycle_units: float         # dT*, AIMD cycle length in units of tau'
    cycle_us: float            # dT* tau'
    queue_build_units: float   # t, time to build a Kmax queue once sum R_C > C (units of tau')
    bound_ms: float            # smallest x with (1-alpha*/2)^(x/(tau' dT*)) C <= tol C/N


def convergence_bound(link_gbps: float, flows: int, params: DcqcnParams, tolerance: float) -> Convergence:
    """Upper bound on the time for any two flows to come within ``tolerance`` x C/N of each other.

    CoNEXT'16 section 4.3 and appendix B, in units of tau' (= T): the queue needs
    ``t = (-1 + sqrt(1 + 8 Kmax / (N R_AI tau'))) / 2`` units to reach Kmax (marking assumed only at
    Kmax); one AIMD cycle lasts ``dT = 2 + (t/2 + C/(2 N R_AI tau')) alpha``; ``alpha*`` is the fixed
    point of ``alpha = (1-g)^dT(alpha) ((1-g) alpha + g)``; rate gaps shrink by ``(1 - alpha*/2)``
    per cycle, so the bound is ``x = tau' dT* ln(tol/N) / ln(1 - alpha*/2)`` (initial gap C).
    """
    _check_case(link_gbps, flows)
    if not 0 < tolerance < 1:
        raise InputError(f"must be in (0, 1), got {tolerance:g}",
                         location="perf_defaults.dcqcn_convergence_tolerance_fraction")
    u = _Units.of(link_gbps, flows, params)
    rai_unit = u.rai * u.taup  # packets per tau' added by all-flow additive increase, per flow
    t = (-1.0 + math.sqrt(1.0 + 8.0 * u.kmax / (u.N * rai_unit))) / 2.0

    def cycle(alpha: float) -> float:
        return 2.0 + (t / 2.0 + u.C * u.taup / (2.0 * u.N * rai_unit)) * alpha

    def residual(alpha: float) -> float:
        return (1.0 - u.g) ** cycle(alpha) * ((1.0 - u.g) * alpha + u.g) - alpha

    lo, hi = 1e-15, 1.0  # residual(lo) > 0, residual(1) < 0 (the paper: f is increasing, f(1) < 1)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if residual(mid) > 0:
            lo = mid
        else:
            hi = mid
    alpha_star = 0.5 * (lo + hi)
    dt = cycle(alpha_star)
    cycles = math.log(tolerance / u.N) / math.log(1.0 - alpha_star / 2.0)
    return Convergence(alpha_star=alpha_star, cycle_units=dt, cycle_us=dt * u.taup * 1e6, queue_build_units=t,
                       bound_ms=cycles * dt * u.taup * 1e3)


@dataclass(frozen=True)
class DcqcnAnalysis:
    """What `fabricplan dcqcn` reports for one (link, flows, delay, parameters) case."""

    link_gbps: float
    flows: int
    delay_us: float
    params: DcqcnParams
    fixed_point: FixedPoint
    phase_margin_deg: float
    crossover_rad_s: float
    stable: bool
    convergence: Convergence

    def document(self) -> dict:
        fp, conv = self.fixed_point, self.convergence
        return {
            "link_gbps": self.link_gbps, "flows": self.flows, "delay_us": self.delay_us,
            "parameters": asdict(self.params),
            "fixed_point": {"p_star": fp.p_star, "p_star_taylor": fp.p_star_taylor, "queue_kb": fp.queue_bytes / 1e3,
                            "queue_taylor_kb": fp.queue_taylor_bytes / 1e3, "alpha": fp.alpha,
                            "rate_gbps": fp.rate_gbps, "target_rate_gbps": fp.target_rate_gbps,
                            "in_marking_range": fp.in_marking_range},
            "phase_margin_deg": self.phase_margin_deg, "crossover_rad_s": self.crossover_rad_s,
            "stable": self.stable,
            "convergence_bound_ms": conv.bound_ms,
            "convergence": {"alpha_star": conv.alpha_star, "cycle_us": conv.cycle_us,
                            "queue_build_tau_prime": conv.queue_build_units},
            "model": "CoNEXT'16 DCQCN fluid model (Zhu et al., 'ECN or Delay'), linearised at the fixed point",
        }


def analyse(link_gbps: float, flows: int, delay_us: float, params: DcqcnParams | None = None,
            *, catalog) -> DcqcnAnalysis:
    """Fixed point, phase margin, stability verdict and convergence bound of one DCQCN case."""
    from fabricplan.sim.params import sim_parameter as perf_parameter

    if not (math.isfinite(delay_us) and 0 <= delay_us <= MAX_DELAY_US):
        raise InputError(f"must be a control-loop delay in {format_span(0, MAX_DELAY_US, 'us')}, got {delay_us:g}",
                         location="--delay-us")
    defaults = dcqcn_params(catalog)
    params = (params or defaults).check()
    try:
        fp = fixed_point(link_gbps, flows, params)
        pm, wc = phase_margin(link_gbps, flows, delay_us, params)
        threshold = perf_parameter("dcqcn_min_phase_margin_deg", catalog)
        conv = convergence_bound(link_gbps, flows, params,
                                 perf_parameter("dcqcn_convergence_tolerance_fraction", catalog))
    except (ZeroDivisionError, OverflowError) as exc:  # each value in range, together beyond a float
        changed = [_flag(name) for name, value in asdict(params).items() if value != getattr(defaults, name)]
        raise InputError(f"this case is beyond the model's floating-point range ({exc}): bring "
                         f"{', '.join(changed) or 'the link rate and flows'} closer to the defaults",
                         location=", ".join(["--flows", "--link", *changed])) from None
    return DcqcnAnalysis(link_gbps=link_gbps, flows=flows, delay_us=delay_us, params=params, fixed_point=fp,
                         phase_margin_deg=pm, crossover_rad_s=wc, stable=pm > threshold, convergence=conv)


def _check_case(link_gbps: float, flows: int) -> None:
    if not math.isfinite(link_gbps) or link_gbps <= 0:
        raise InputError(f"must be a link rate > 0 Gb/s, got {link_gbps:g}", location="--link")
    if int(flows) != flows or not 1 <= flows <= MAX_FLOWS:
        raise InputError(f"must be a whole number of flows in {format_span(1, MAX_FLOWS, '')}, got {flows}",
                         location="--flows")
