await new Promise((resolve) => setTimeout(resolve, 1));
export const value = { later: true };
