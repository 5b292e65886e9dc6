package dev.fencing.example;

import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.web.ErrorResponseException;

/** 404 as a problem detail. */
public class AccountNotFoundException extends ErrorResponseException {

    public AccountNotFoundException(long id) {
        super(HttpStatus.NOT_FOUND, problem(id), null);
    }

    private static ProblemDetail problem(long id) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.NOT_FOUND, "No account " + id);
        problem.setTitle("Account not found");
        problem.setProperty("account", id);
        return problem;
    }
}
