package dev.fencing.it.boot.testing;

import dev.fencing.context.FencingContext;
import dev.fencing.context.MissingTokenException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.token.FencingToken;
import dev.fencing.web.FencingExceptionAdvice;
import dev.fencing.web.FencingHeader;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.webmvc.test.autoconfigure.WebMvcTest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.test.context.bean.override.mockito.MockitoBean;
import org.springframework.test.web.servlet.MockMvc;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.Mockito.doAnswer;
import static org.mockito.Mockito.doThrow;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;

/**
 * {@code @WebMvcTest} of the controller with the fenced service mocked: the slice starts (a mock writes nothing to
 * fence), answers the library's exceptions as the application does, and binds a caller's header on the filter's paths.
 */
// tag::web-slice[]
@WebMvcTest(controllers = WalletController.class, properties = "fencing.web.filter.url-patterns=/internal/*")
class WebSliceTest {

    @Autowired
    MockMvc mvc;

    @MockitoBean
    WalletService wallets;

    @Test
    void aStaleTokenIs409AsInTheApplication() throws Exception {
        doThrow(new StaleTokenException("wallets:3", new FencingToken("wallets:3", 4, "caller"), 5))
                .when(wallets).deposit(anyLong(), anyLong());
        MockHttpServletResponse response = deposit(new FencingToken("wallets:3", 4, "caller").toText());
        assertThat(response.getStatus()).isEqualTo(409);
        assertThat(response.getContentType()).isEqualTo("application/problem+json");
        assertThat(response.getContentAsString()).contains(FencingExceptionAdvice.STALE_TOKEN_TYPE.toString());
    }
    // end::web-slice[]

    @Test
    void aMissingTokenOnTheFiltersPathsIsTheCallers428() throws Exception {
        doThrow(new MissingTokenException("wallets:3", "WalletService.deposit"))
                .when(wallets).deposit(anyLong(), anyLong());
        MockHttpServletResponse response = deposit(null);
        assertThat(response.getStatus()).isEqualTo(428);
        assertThat(response.getContentAsString()).contains(FencingExceptionAdvice.MISSING_TOKEN_TYPE.toString());
    }

    @Test
    void theCallersHeaderIsBoundForTheCall() throws Exception {
        List<FencingToken> seen = new CopyOnWriteArrayList<>();
        doAnswer(call -> seen.add(FencingContext.current("wallets:3"))).when(wallets).deposit(anyLong(), anyLong());
        assertThat(deposit(new FencingToken("wallets:3", 6, "caller").toText()).getStatus()).isEqualTo(200);
        assertThat(seen).singleElement().satisfies(token -> assertThat(token.value()).isEqualTo(6));
    }

    private MockHttpServletResponse deposit(String header) throws Exception {
        var request = post("/internal/wallets/3/deposits/10");
        if (header != null) {
            request.header(FencingHeader.NAME, header);
        }
        return mvc.perform(request).andReturn().getResponse();
    }
}
