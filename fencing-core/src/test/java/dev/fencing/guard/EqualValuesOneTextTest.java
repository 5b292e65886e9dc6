package dev.fencing.guard;

import dev.fencing.FencingConfigurationException;
import dev.fencing.annotation.FencingKey;
import dev.fencing.context.FencingContext;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.OffsetTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.chrono.ChronoZonedDateTime;
import java.time.chrono.HijrahDate;
import java.util.ArrayList;
import java.util.List;

import static dev.fencing.guard.Bound.bound;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Values that are equal have one key text, so one entity is one resource: a {@code BigDecimal} without trailing zeros
 * in plain digits ({@code 1}, {@code 1.00}, {@code 1E+0}: {@code 1}; {@code 0.00}: {@code 0}), the same text as the
 * integer of that value; an {@code OffsetDateTime} or a zoned date-time as its instant, at any offset or zone, the
 * text of the {@code Instant}. Before, each kept its {@code toString()}, which tells such values apart, and two callers
 * of one account held two locks and two max_seen. An {@code OffsetTime} (a time at an offset, no instant without a
 * date) is refused, at startup as a parameter's type and per call. A record takes its components' {@code toString()},
 * so one with such a component is refused (see {@link RecordKeyTest}).
 */
class EqualValuesOneTextTest {

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final InMemoryFenceStore store = new InMemoryFenceStore();
    private final FenceGuard guard = new FenceGuard(store);
    private final FencePoint point = new FencePoint("Repo.save(Object)", "accounts", args -> args[0], "#id",
            false, new FencingMetrics(registry));

    @AfterEach
    void nothingLeaks() {
        assertThat(FencingContext.isEmpty()).isTrue();
    }

    @Test
    void equalBigDecimalsHaveOneText() {
        for (String same : List.of("1", "1.00", "1E+0", "0.1E1", "1.000000000000000000000000000000")) {
            assertThat(KeyValues.textOf(new BigDecimal(same))).as(same).isEqualTo("1");
        }
        assertThat(KeyValues.textOf(new BigDecimal("0.00"))).isEqualTo("0");
        assertThat(KeyValues.textOf(new BigDecimal("-0.000"))).isEqualTo("0");
        assertThat(KeyValues.textOf(new BigDecimal("0E+5"))).isEqualTo("0");
        assertThat(KeyValues.textOf(new BigDecimal("1E+3"))).isEqualTo("1000");
        assertThat(KeyValues.textOf(new BigDecimal("1000.0"))).isEqualTo("1000");
        assertThat(KeyValues.textOf(new BigDecimal("-12.3400"))).isEqualTo("-12.34");
        assertThat(KeyValues.textOf(new BigDecimal("0.00120"))).isEqualTo("0.0012");
        assertThat(KeyValues.textOf(new BigDecimal("1.2E-5"))).isEqualTo("0.000012");
        // the same text as the integer of that value, as a long key or a BigInteger has it
        assertThat(KeyValues.textOf(new BigDecimal("42.0"))).isEqualTo(KeyValues.textOf(BigInteger.valueOf(42)))
                .isEqualTo(Long.toString(42));
    }

    /**
     * A value whose plain digits could not fit in an effective resource keeps its exponent: one text still, and no
     * text of a billion characters built from a request's {@code 1E+999999999}.
     */
    @Test
    void aBigDecimalTooLongInPlainDigitsKeepsItsExponent() {
        assertThat(KeyValues.textOf(new BigDecimal("1E+999999999"))).isEqualTo("1E+999999999");
        assertThat(KeyValues.textOf(new BigDecimal("10.0E+999999998"))).isEqualTo("1E+999999999");
        assertThat(KeyValues.textOf(new BigDecimal("1E-999999999"))).isEqualTo("1E-999999999");
        String fits = "9".repeat(FencingToken.MAX_PART_LENGTH);
        assertThat(KeyValues.textOf(new BigDecimal(fits))).isEqualTo(fits);
        assertThat(KeyValues.textOf(new BigDecimal(fits + "0"))).isEqualTo(new BigDecimal(fits + "0")
                .stripTrailingZeros().toString());
        String fraction = "0." + "0".repeat(FencingToken.MAX_PART_LENGTH - 3) + "1"; // 256 characters
        assertThat(KeyValues.textOf(new BigDecimal(fraction))).isEqualTo(fraction);
        assertThat(KeyValues.textOf(new BigDecimal("-" + fraction))).isEqualTo("-1E-" + (fraction.length() - 2));
    }

    @Test
    void oneInstantAtEveryOffsetOrZoneHasOneText() {
        OffsetDateTime utc = OffsetDateTime.of(2026, 12, 6, 9, 0, 0, 0, ZoneOffset.UTC);
        String instant = "2026-12-06T09:00:00Z";
        assertThat(KeyValues.textOf(Instant.parse(instant))).isEqualTo(instant);
        for (Object same : List.of(utc, utc.withOffsetSameInstant(ZoneOffset.ofHours(1)),
                utc.withOffsetSameInstant(ZoneOffset.ofHoursMinutes(-9, -30)), utc.toZonedDateTime(),
                utc.atZoneSameInstant(ZoneId.of("UTC")), utc.atZoneSameInstant(ZoneId.of("Europe/Paris")),
                HijrahDate.from(utc).atTime(utc.toLocalTime()).atZone(ZoneOffset.UTC))) {
            assertThat(KeyValues.textOf(same)).as(same.toString()).isEqualTo(instant);
        }
        assertThat(KeyValues.textOf(utc.plusNanos(1))).isEqualTo("2026-12-06T09:00:00.000000001Z");
    }

    /** Each of these has one text per value already: kept as it is. */
    @Test
    void otherTimeValuesKeepTheirText() {
        LocalDateTime local = LocalDateTime.of(2026, 12, 6, 9, 0);
        assertThat(KeyValues.textOf(local)).isEqualTo("2026-12-06T09:00");
        assertThat(KeyValues.textOf(Duration.ofMinutes(60))).isEqualTo(KeyValues.textOf(Duration.ofHours(1)));
        assertThat(KeyValues.textOf(ZoneOffset.UTC)).isEqualTo("Z");
    }

    @Test
    void twoSpellingsOfOneAccountMeetOneToken() throws Throwable {
        FencingToken token = new FencingToken("accounts:1", 1, "h");
        assertThat(bound(token, () -> guard.invoke(point, new Object[] {new BigDecimal("1.00")}, () -> "a")))
                .isEqualTo("a");
        assertThat(bound(token, () -> guard.invoke(point, new Object[] {new BigDecimal("1")}, () -> "b")))
                .isEqualTo("b");
        assertThat(store.maxSeen("accounts:1")).hasValue(1);
        assertThat(store.size()).isEqualTo(1);
    }

    @Test
    void anOffsetTimeIsRefusedAtStartupAndPerCall() {
        assertThatThrownBy(() -> KeyValues.checkParameterType(OffsetTime.class, "Repo.save(OffsetTime)", "#t"))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("Repo.save(OffsetTime)").hasMessageContaining("'#t'")
                .hasMessageContaining("an OffsetTime, whose text tells apart one time at two offsets")
                .hasMessageContaining("one entity could be fenced as two resources")
                .hasMessageContaining("an OffsetDateTime, a ZonedDateTime or an Instant")
                .hasMessageContaining(FencingKey.class.getName());
        List<String> ran = new ArrayList<>();
        OffsetTime nine = OffsetTime.of(9, 0, 0, 0, ZoneOffset.UTC);
        assertThat(KeyValues.textOf(nine)).isNull();
        assertThatThrownBy(() -> guard.invoke(point, new Object[] {nine}, () -> ran.add("x")))
                .isInstanceOf(InvalidKeyException.class).hasMessageContaining("an OffsetTime");
        assertThat(ran).isEmpty();
        for (Class<?> accepted : List.of(BigDecimal.class, OffsetDateTime.class, ZonedDateTime.class,
                ChronoZonedDateTime.class, Instant.class)) {
            assertThatCode(() -> KeyValues.checkParameterType(accepted, "Repo.save(X)", "#x")).as(accepted.getName())
                    .doesNotThrowAnyException();
        }
    }

    record Slot(String room, OffsetDateTime start) {
    }

    record Booking(long id, Slot slot) {
    }

    record Meeting(String room, ChronoZonedDateTime<?> start) {
    }

    /** A record whose text would carry a date-time's offset fails startup, naming the path to key on instead. */
    @Test
    void aRecordWithAZonedComponentIsRefusedNamingIt() {
        assertThatThrownBy(() -> KeyValues.checkParameterType(Booking.class, "Repo.save(Booking)", "#b"))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("a record whose component slot is a record whose component start is an "
                        + "OffsetDateTime, whose text tells apart one instant at two offsets")
                .hasMessageContaining("one entity could be fenced as two resources")
                .hasMessageContaining("Key on that component itself (e.g. '#b.slot.start')")
                .hasMessageContaining(FencingKey.class.getName() + " on Booking");
        // declared as an interface: judged per call, and refused for the value it holds
        assertThatCode(() -> KeyValues.checkParameterType(Meeting.class, "Repo.save(Meeting)", "#m"))
                .doesNotThrowAnyException();
        Meeting meeting = new Meeting("a", ZonedDateTime.of(2026, 12, 6, 9, 0, 0, 0, ZoneOffset.UTC));
        assertThat(KeyValues.textOf(meeting)).isNull();
        assertThat(KeyValues.refusalOf(meeting)).contains("component start (ZonedDateTime) is a ZonedDateTime");
    }
}
