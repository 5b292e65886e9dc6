package dev.fencing.web.internal;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.mock.web.MockHttpServletRequest;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Servlet URL patterns matched as a container matches a filter mapping, on the servlet path and path info. */
class ServletUrlPatternsTest {

    @ParameterizedTest
    @CsvSource({
            "/internal/*, /internal, true",
            "/internal/*, /internal/, true",
            "/internal/*, /internal/a/b, true",
            "/internal/*, /internals, false",
            "/internal/*, /public/internal/x, false",
            "/internal/deposit, /internal/deposit, true",
            "/internal/deposit, /internal/deposit/x, false",
            "*.do, /a/b.do, true",
            "*.do, /a.do/b, false",
            "*.do, /a/bdo, false",
    })
    void matchesAsAContainerDoes(String pattern, String path, boolean matches) {
        assertThat(ServletUrlPatterns.matches(pattern, path)).isEqualTo(matches);
    }

    @ParameterizedTest
    @CsvSource({
            "/internal, /x, true",   // a servlet mapped to /internal/*: path info /x
            "'', /internal/x, true", // MockMvc's default: empty servlet path, the path in the path info
            "/public, /internal, false",
    })
    void readsTheServletPathAndPathInfo(String servletPath, String pathInfo, boolean matches) {
        MockHttpServletRequest request = new MockHttpServletRequest("GET", servletPath + pathInfo);
        request.setServletPath(servletPath);
        request.setPathInfo(pathInfo);
        assertThat(ServletUrlPatterns.matches(List.of("/internal/*"), request)).isEqualTo(matches);
    }
}
