package dev.warden.quota;

import java.util.Objects;

/** An amount refused by {@link Amount#parse(String)} or {@link Amount#of(long)}, with the reason as a value. */
public class InvalidAmountException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    private final AmountProblem problem;

    public InvalidAmountException(AmountProblem problem, String message) {
        super(message);
        this.problem = Objects.requireNonNull(problem, "problem");
    }

    /** Why the amount was refused. */
    public AmountProblem problem() {
        return problem;
    }
}
