"""Helpers shared by test packages (throwaway database servers, ...)."""
