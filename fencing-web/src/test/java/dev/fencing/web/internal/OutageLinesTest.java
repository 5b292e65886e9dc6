package dev.fencing.web.internal;

import dev.fencing.testsupport.LogRecords;
import dev.fencing.issuer.LockAcquisitionException;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.logging.LogRecord;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * During an outage every request fails the same way: the 503's WARN line comes at most once a minute per cause, not
 * once per request (81 lines in 90 s at one request a second, a trial counted), while each request still gets its 503.
 */
class OutageLinesTest {

    /** A cause of this test's own, so that no other test's lines share its pace. */
    static final class DatabaseDown extends RuntimeException {
        DatabaseDown() {
            super("connection refused");
        }
    }

    @Test
    void theLockNotAcquiredLineComesOncePerCauseNotPerRequest() {
        List<LogRecord> records;
        try (LogRecords log = LogRecords.of(FencingProblems.class)) {
            for (int request = 0; request < 5; request++) {
                assertThat(FencingProblems.lockNotAcquired(new LockAcquisitionException("accounts:" + request,
                        "Could not lock resource", new DatabaseDown())).getStatus()).isEqualTo(503);
            }
            records = log.records();
        }
        assertThat(records).filteredOn(record -> record.getMessage().contains("Lock not acquired")).hasSize(1);
    }
}
