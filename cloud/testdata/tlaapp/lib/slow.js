export const value = await new Promise((resolve) => setTimeout(() => resolve('slow done'), 1));
