package dev.fencing.example;

import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.web.ErrorResponseException;

/** 422 as a problem detail; thrown inside the transaction, so nothing of the transfer is written. */
public class InsufficientFundsException extends ErrorResponseException {

    public InsufficientFundsException(long id, long amount) {
        super(HttpStatus.UNPROCESSABLE_CONTENT, problem(id, amount), null);
    }

    private static ProblemDetail problem(long id, long amount) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.UNPROCESSABLE_CONTENT,
                "Account " + id + " cannot cover " + amount);
        problem.setTitle("Insufficient funds");
        problem.setProperty("account", id);
        return problem;
    }
}
