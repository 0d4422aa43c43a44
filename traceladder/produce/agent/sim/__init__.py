"""The simulated OpenAI-compatible model (sim:oracle, sim:faulty) and its labelled fault plans."""

from traceladder.produce.agent.sim.model import SIM_HOST, SimModel, SimSpec, is_sim

__all__ = ["SIM_HOST", "SimModel", "SimSpec", "is_sim"]
