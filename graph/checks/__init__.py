"""Plan checks done in code: the limits a request states, the words of a product, the
picks, the plan fixes (a fallback plan built in code, tidying) and a person's edits.

No LLM and no LangGraph: these read and return plans.
"""
