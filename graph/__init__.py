"""shopping-planner: a planner-executor shopping assistant as a LangGraph state machine."""
