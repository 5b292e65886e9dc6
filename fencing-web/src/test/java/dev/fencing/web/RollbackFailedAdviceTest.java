package dev.fencing.web;

import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.store.FenceStoreException;
import dev.fencing.token.FencingToken;
import jakarta.servlet.ServletException;
import org.junit.jupiter.api.Test;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.transaction.TransactionSystemException;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import java.sql.SQLException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;

/**
 * The database connection lost during a fence check fails the store and then the transaction's rollback; Spring's
 * transaction interceptor throws the rollback's {@link TransactionSystemException} with the store's failure as its
 * application exception. The answer is the fence failure's own (a 503), not a 500; any other rollback failure is left
 * alone.
 */
class RollbackFailedAdviceTest {

    @RestController
    static class Handler {
        @PostMapping("/write")
        String write(@RequestParam String replaced) {
            TransactionSystemException rollback = new TransactionSystemException("JDBC rollback failed",
                    new SQLException("An I/O error occurred while sending to the backend", "08006"));
            switch (replaced) {
                case "store" -> rollback.initApplicationException(new FenceStoreException("ledger:7",
                        new FencingToken("ledger:7", 3, "h"), "Fence store failed for resource 'ledger:7': "
                        + "connection lost", new SQLException("connection lost", "08006")));
                case "lock" -> rollback.initApplicationException(new LockAcquisitionException("ledger:7",
                        "Could not lock resource 'ledger:7': connection lost"));
                case "other" -> rollback.initApplicationException(new IllegalStateException("the body failed"));
                default -> { }
            }
            throw rollback;
        }
    }

    private final MockMvc mvc = MockMvcBuilders.standaloneSetup(new Handler())
            .setControllerAdvice(new FencingExceptionAdvice(), new FencingTransientFailureAdvice()).build();

    private MockHttpServletResponse send(String replaced) throws Exception {
        return mvc.perform(post("/write").param("replaced", replaced)).andReturn().getResponse();
    }

    @Test
    void aStoreFailureReplacedByAFailedRollbackIsAnsweredAsTheStoreFailure() throws Exception {
        MockHttpServletResponse response = send("store");
        assertThat(response.getStatus()).isEqualTo(503);
        assertThat(response.getContentAsString()).contains(FencingExceptionAdvice.STORE_UNAVAILABLE_TYPE.toString())
                .contains("ledger:7").doesNotContain("connection lost").doesNotContain("rollback");
    }

    @Test
    void aLockNotAcquiredReplacedByAFailedRollbackIsA503WithRetryAfter() throws Exception {
        MockHttpServletResponse response = send("lock");
        assertThat(response.getStatus()).isEqualTo(503);
        assertThat(response.getHeader("Retry-After")).isEqualTo("1");
        assertThat(response.getContentAsString()).contains(FencingExceptionAdvice.LOCK_NOT_ACQUIRED_TYPE.toString());
    }

    @Test
    void anyOtherRollbackFailureIsLeftToSpring() {
        for (String replaced : new String[] {"other", "none"}) {
            Throwable thrown = catchThrowable(() -> send(replaced));
            assertThat(thrown).as(replaced).isInstanceOf(ServletException.class)
                    .hasRootCauseInstanceOf(SQLException.class);
            assertThat(thrown.getCause()).as(replaced).isInstanceOf(TransactionSystemException.class);
        }
    }
}
