"""The instruction-catalog front end (agentd workflow dialect 3) and CEL."""
