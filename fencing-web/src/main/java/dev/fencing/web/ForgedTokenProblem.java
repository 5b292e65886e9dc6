package dev.fencing.web;

import dev.fencing.rule.ForgedTokenException;
import dev.fencing.token.FencingToken;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The one answer to a token that failed signature verification, whether {@link FencingTokenFilter} refuses it before
 * the request runs or {@link FencingExceptionAdvice} maps a {@link ForgedTokenException} from a fenced call: 403, type
 * {@link FencingExceptionAdvice#FORGED_TOKEN_TYPE}, a generic detail naming the resource, and the properties
 * {@code resource}, {@code presented} (the token without its signature) and {@code verdict} = forged. Why the token
 * failed (unsigned, unknown or retired key, bad signature) is not told to the caller.
 */
final class ForgedTokenProblem {

    static final String TITLE = "Forged fencing token";

    private ForgedTokenProblem() {
    }

    static String detail(String resource) {
        return "The fencing token for resource '" + resource + "' failed signature verification; the call did not "
                + "run and max_seen is unchanged";
    }

    /** The members of the problem body beyond type, title, status and detail, in order. */
    static Map<String, String> properties(String resource, FencingToken presented) {
        Map<String, String> properties = new LinkedHashMap<>();
        properties.put("resource", resource);
        properties.put("presented", presented.unsigned().toText());
        properties.put("verdict", "forged");
        return properties;
    }

    static ProblemDetail of(ForgedTokenException e) {
        ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.FORBIDDEN, detail(e.resource()));
        problem.setType(FencingExceptionAdvice.FORGED_TOKEN_TYPE);
        problem.setTitle(TITLE);
        properties(e.resource(), e.presented()).forEach(problem::setProperty);
        return problem;
    }
}
